import COpenSSL

/// The server's side of a WebSocket opening handshake (RFC 6455, 4.2): a pure decision from a
/// request head to either the `101 Switching Protocols` answer or a refusal, each refusal an
/// HTTP answer whose one-line body says what was wrong (README.md, "Followers in a browser").
///
/// | Request                                              | Answer                                     |
/// |------------------------------------------------------|--------------------------------------------|
/// | a method other than `GET`                            | `405`, `Allow: GET`                        |
/// | HTTP/1.0                                             | `400`                                      |
/// | a body (`Content-Length`, `Transfer-Encoding`)       | `400`                                      |
/// | no `Upgrade: websocket`                              | `426`, `Upgrade: websocket`                |
/// | `Connection` without the `upgrade` token             | `400`                                      |
/// | `Sec-WebSocket-Version` other than `13`              | `426`, `Sec-WebSocket-Version: 13`         |
/// | `Sec-WebSocket-Key` missing or not 16 bytes base64   | `400`                                      |
/// | an `Origin` that is neither this host nor allowed    | `403`                                      |
///
/// A request without `Origin` is not from a browser (browsers always send it on a WebSocket
/// handshake), and no page can make another site's browser send it: it is accepted.
public enum WebSocketHandshake {
    /// The GUID every `Sec-WebSocket-Accept` is derived with (RFC 6455, 1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// What to answer a handshake request with.
    public enum Decision: Equatable, Sendable {
        /// Switch: write this `101` response, then speak WebSocket.
        case accept(HTTPResponse)
        /// Refuse with this answer, then close.
        case refuse(HTTPResponse)
    }

    /// The decision for `head`. `allowedOrigins` are origins (`https://slides.example.org`)
    /// accepted besides the request's own host (compared case-insensitively, without a
    /// trailing `/`).
    public static func decide(_ head: HTTPRequestHead, allowedOrigins: [String] = []) -> Decision {
        guard head.method == "GET" else {
            return .refuse(.text(405, "a WebSocket handshake is a GET, not \(head.method.prefix(20))", headers: [HTTPHeader("Allow", "GET")]))
        }
        guard head.version >= .http11 else { return .refuse(.text(400, "a WebSocket handshake needs HTTP/1.1")) }
        guard !head.hasBody else { return .refuse(.text(400, "a WebSocket handshake has no body")) }
        guard tokens(head.header("Upgrade")).contains("websocket") else {
            return .refuse(.text(426, "this path speaks WebSocket only: send Upgrade: websocket",
                                 headers: [HTTPHeader("Upgrade", "websocket"), HTTPHeader("Sec-WebSocket-Version", "13")]))
        }
        guard tokens(head.header("Connection")).contains("upgrade") else {
            return .refuse(.text(400, "a WebSocket handshake needs Connection: Upgrade"))
        }
        guard head.header("Sec-WebSocket-Version")?.trimmingBlanks == "13" else {
            return .refuse(.text(426, "unsupported Sec-WebSocket-Version (this server speaks 13)",
                                 headers: [HTTPHeader("Sec-WebSocket-Version", "13")]))
        }
        guard let key = head.header("Sec-WebSocket-Key")?.trimmingBlanks, isValidKey(key) else {
            return .refuse(.text(400, "Sec-WebSocket-Key missing or not 16 bytes in base64"))
        }
        if let origin = head.header("Origin"), !originAllowed(origin, host: head.header("Host"), allowed: allowedOrigins) {
            return .refuse(.text(403, "origin \(origin.prefix(100)) is not allowed (web-origins)"))
        }
        return .accept(HTTPResponse(status: 101, headers: [
            HTTPHeader("Upgrade", "websocket"),
            HTTPHeader("Connection", "Upgrade"),
            HTTPHeader("Sec-WebSocket-Accept", acceptValue(forKey: key)),
        ]))
    }

    /// `Sec-WebSocket-Accept` for `key`: base64 of the SHA-1 of the key and ``guid``.
    public static func acceptValue(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = input.withUnsafeBytes { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha1(), nil)
        }
        return base64(Array(digest[0..<Int(length)]))
    }

    /// `bytes` in base64 (with padding), by OpenSSL.
    public static func base64(_ bytes: [UInt8]) -> String {
        var encoded = [UInt8](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)  // and a NUL
        let count = EVP_EncodeBlock(&encoded, bytes, Int32(bytes.count))
        return String(decoding: encoded[0..<Int(max(0, count))], as: UTF8.self)
    }

    /// Whether `key` is 16 bytes in base64: 22 base64 characters, the last with its 4 low bits
    /// zero (`A`, `Q`, `g` or `w`), then `==`.
    public static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        guard bytes[0..<22].allSatisfy(isBase64) else { return false }
        return "AQgw".utf8.contains(bytes[21])
    }

    /// Whether a page from `origin` may open a socket here: its host and port are `host` (the
    /// request's `Host`), or it is one of `allowed`.
    public static func originAllowed(_ origin: String, host: String?, allowed: [String]) -> Bool {
        let normalized = origin.trimmingBlanks.lowercased()
        if allowed.contains(where: { normalizedOrigin($0) == normalizedOrigin(normalized) }) { return true }
        guard let host = host?.trimmingBlanks.lowercased(), !host.isEmpty else { return false }
        for scheme in ["http://", "https://"] where normalized.hasPrefix(scheme) {
            return normalized.dropFirst(scheme.count) == host
        }
        return false
    }

    private static func normalizedOrigin(_ origin: String) -> String {
        var text = origin.trimmingBlanks.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// A header's comma-separated tokens, lower case, blanks around them removed.
    static func tokens(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").map { String($0).trimmingBlanks.lowercased() }
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}

extension String {
    /// Without spaces and tabs at either end.
    package var trimmingBlanks: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
