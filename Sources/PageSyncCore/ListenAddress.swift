/// Where the daemon listens: a host and a TCP port.
///
/// Accepted forms: `"127.0.0.1:7777"`, `"[::1]:7777"`, `"localhost:7777"`, and `":7777"`
/// (meaning `127.0.0.1`). The port is 0...65535 in ASCII digits; 0 asks for any free port.
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// The host: an IPv4 literal, an IPv6 literal without brackets, or a host name.
    public var host: String
    /// The TCP port; 0 means any free port.
    public var port: UInt16

    /// Creates an address from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Whether the host is a loopback address: `127.0.0.0/8`, `::1` or `localhost`.
    public var isLoopback: Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts[0] == "127", parts.allSatisfy({ UInt8($0) != nil }) { return true }
        return host == "::1" || host.lowercased() == "localhost"
    }

    /// Parses `host:port`, `[ipv6]:port` or `:port`. Returns nil for a missing or bad port
    /// (not all digits, above 65535), an empty bracketed host, an unbracketed IPv6 address,
    /// blanks, or characters not allowed in a host name or IP literal.
    public init?(parsing text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { return nil }
            portPart = rest.dropFirst()
            guard hostPart.contains(":"), hostPart.utf8.allSatisfy(Self.isIPv6Byte) else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":"), hostPart.utf8.allSatisfy(Self.isHostByte) else { return nil }
            guard hostPart.first != "-", hostPart.first != "." else { return nil }
        }
        guard !portPart.isEmpty, portPart.utf8.count <= 5,
              portPart.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let port = UInt16(portPart) else { return nil }
        self.host = hostPart.isEmpty ? "127.0.0.1" : String(hostPart)
        self.port = port
    }

    /// `host:port`, with an IPv6 host in brackets (`[::1]:7777`); parses back to the same value.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func isHostByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private static func isIPv6Byte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ":"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }
}
