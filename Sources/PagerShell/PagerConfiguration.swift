import PageSyncCore
import UV

/// Where the pager connects: a host and a TCP port, in plaintext or over TLS.
public struct PagerServerAddress: Equatable, Sendable, CustomStringConvertible {
    /// The port a bare `tls://HOST` means.
    public static let defaultTLSPort: UInt16 = 7778
    /// True for `tls://HOST:PORT`: connect over TLS and verify the server's certificate.
    public var tls = false
    /// The default server, `127.0.0.1:7777`.
    public static let defaultAddress = PagerServerAddress(host: "127.0.0.1", port: 7777)
    /// The environment variable that replaces ``defaultAddress`` when set and not empty.
    public static let environmentVariable = "PAGESYNC_SERVER"

    /// An IPv4 or IPv6 literal (without brackets) or a host name.
    public var host: String
    /// The TCP port (1...65535).
    public var port: UInt16

    /// An address from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPv6]:PORT`, `:PORT` (127.0.0.1) or a bare `HOST` (port 7777),
    /// each optionally prefixed with `tls://` (then a bare `HOST` means port 7778).
    /// Returns nil for anything else, and for port 0.
    public init?(parsing text: String) {
        var trimmed = text.trimmingBlanks
        let tls = trimmed.lowercased().hasPrefix("tls://")
        if tls { trimmed = String(trimmed.dropFirst("tls://".count)) }
        var parsed = ListenAddress(parsing: trimmed)
        if parsed == nil, !trimmed.isEmpty, !trimmed.contains(":") || (trimmed.hasPrefix("[") && trimmed.hasSuffix("]")) {
            parsed = ListenAddress(parsing: trimmed + ":\(tls ? Self.defaultTLSPort : Self.defaultAddress.port)")
        }
        guard let parsed, parsed.port != 0 else { return nil }
        self.init(host: parsed.host, port: parsed.port)
        self.tls = tls
    }

    /// The address to use when none is given on the command line: ``environmentVariable`` if set
    /// (nil if it does not parse), else ``defaultAddress``.
    public static func fromEnvironment(_ environment: [String: String]) -> Result<PagerServerAddress, AddressError> {
        guard let text = environment[environmentVariable], !text.isEmpty else { return .success(defaultAddress) }
        guard let address = PagerServerAddress(parsing: text) else {
            return .failure(AddressError(text: text, source: "\(environmentVariable)"))
        }
        return .success(address)
    }

    /// `host:port`, an IPv6 host in brackets; `tls://` first for TLS.
    public var description: String { (tls ? "tls://" : "") + ListenAddress(host: host, port: port).description }

    /// An address that does not parse, with where it came from, for a one-line error.
    public struct AddressError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The text that did not parse.
        public var text: String
        /// Where it came from (an argument, an environment variable).
        public var source: String
        /// An error for `text` from `source`.
        public init(text: String, source: String) {
            self.text = text
            self.source = source
        }
        /// `PAGESYNC_SERVER: "x" is not HOST:PORT (for example 127.0.0.1:7777)`.
        public var description: String {
            "\(source): \"\(text)\" is not HOST:PORT (for example 127.0.0.1:7777)"
        }
    }
}

/// Everything `pagesync` was started with.
public struct PagerConfiguration: Sendable {
    /// The server to connect to.
    public var server: PagerServerAddress
    /// `--room`: the room to be in (nil: the server's default room).
    public var room: String?
    /// `--name`: the name others see (nil: the server's `guest-<n>`).
    public var name: String?
    /// `--token`: the control token for presenter rooms.
    public var token: String?
    /// `--follow`: follower only, no key ever asks the room to change.
    public var followOnly: Bool
    /// `--tls-ca`: the CA file (PEM) the server's certificate must chain to; nil for the system's.
    public var tlsCAFile: String?
    /// `--tls-insecure`: do not verify the server's certificate at all (testing only).
    public var tlsInsecure = false
    /// `--tls-cert`: the client certificate (PEM chain) shown to a server that asks for one;
    /// set together with ``tlsKeyFile`` (``clientCertificateProblem(certificateFile:keyFile:)``).
    public var tlsCertificateFile: String?
    /// `--tls-key`: the private key (PEM) of ``tlsCertificateFile``.
    public var tlsKeyFile: String?
    /// `--markdown` (true) / `--plain` (false): how pages are shown (nil, the default: markdown for
    /// documents named `.md` or `.markdown`).
    public var markdown: Bool?
    /// `--notes`: the speaker's notes view in place of the pager (needs control of the room).
    public var notes = false
    /// `-N`, `--line-numbers`: show the document's line numbers from the start.
    public var lineNumbers = false

    /// A configuration; only the server is required.
    public init(server: PagerServerAddress, room: String? = nil, name: String? = nil, token: String? = nil,
                followOnly: Bool = false, tlsCAFile: String? = nil, tlsInsecure: Bool = false,
                markdown: Bool? = nil) {
        self.markdown = markdown
        self.server = server
        self.room = room
        self.name = name
        self.token = token
        self.followOnly = followOnly
        self.tlsCAFile = tlsCAFile
        self.tlsInsecure = tlsInsecure
    }
}

extension PagerConfiguration {
    /// Why `--tls-cert` and `--tls-key` cannot be used as given (nil: they can): one without
    /// the other.
    public static func clientCertificateProblem(certificateFile: String?, keyFile: String?) -> String? {
        switch (certificateFile, keyFile) {
        case (nil, nil), (_?, _?): nil
        case (_?, nil): "--tls-cert needs --tls-key: the private key of the certificate"
        case (nil, _?): "--tls-key needs --tls-cert: the certificate the key belongs to"
        }
    }

    /// Why `name` cannot be a client or room name on the wire (nil: it can), naming `option`:
    /// `--name "Ann Smith": names are 1-32 of A-Z a-z 0-9 . _ - (no spaces), for example Ann_Smith`.
    public static func nameProblem(_ name: String, option: String) -> String? {
        guard !Names.isValid(name) || name == "-" else { return nil }
        if name == "-" { return "\(option) \"-\": \"-\" means nobody on the wire; pick another name" }
        let example = Names.roomName(forFile: name.replacingBlanks)
        let what = name.contains(" ") || name.contains("\t") ? " (no spaces)" : ""
        return "\(option) \"\(name)\": names are 1-32 of A-Z a-z 0-9 . _ -\(what), for example \(example)"
    }
}

extension String {
    var replacingBlanks: String {
        String(map { $0 == " " || $0 == "\t" ? "_" : $0 })
    }
}
