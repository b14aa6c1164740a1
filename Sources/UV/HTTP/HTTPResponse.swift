/// A response to send: status, header fields and body. ``encodedHead(closing:bodyLength:)``
/// writes the status line and the fields the server adds (`Content-Length`, `Connection: close`).
public struct HTTPResponse: Equatable, Sendable {
    /// The status code (200, 404 ...).
    public var status: Int
    /// Header fields besides `Content-Length` and `Connection`, which the connection writes.
    public var headers: [HTTPHeader]
    /// The body (sent whole, with its `Content-Length`; not sent for `HEAD`).
    public var body: [UInt8]

    /// A response holding exactly these values.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `text` as `text/plain; charset=utf-8`, with an LF added when it has none at its end.
    public static func text(_ status: Int, _ text: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        var body = Array(text.utf8)
        if body.last != 0x0A { body.append(0x0A) }
        return HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")] + headers, body: body)
    }

    /// The reason phrase of the status codes this server sends (RFC 9110, 15); `Unknown` for others.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 421: "Misdirected Request"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }

    /// The status line, the header fields, `Content-Length: <bodyLength>` (unless one is
    /// among the fields, or the status is 1xx or 204), `Connection: close` when `closing`, and the blank line; CRLF after
    /// each. A control character in a name or value is written as a space, so no field can
    /// break the head.
    public func encodedHead(closing: Bool, bodyLength: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        func put(_ text: String) {
            for byte in text.utf8 { out.append(byte < 0x20 || byte == 0x7F ? 0x20 : byte) }
        }
        func field(_ name: String, _ value: String) {
            put(name)
            out += [0x3A, 0x20]  // ": "
            put(value)
            out += [0x0D, 0x0A]
        }
        put("HTTP/1.1 \(status) \(Self.reason(status))")
        out += [0x0D, 0x0A]
        for header in headers { field(header.name, header.value) }
        // None on 1xx and 204 answers (RFC 9110, 8.6): a 101 is followed by the new protocol.
        if status >= 200 && status != 204 && !headers.contains(where: { $0.name.lowercased() == "content-length" }) {
            field("Content-Length", String(bodyLength ?? body.count))
        }
        if closing { field("Connection", "close") }
        out += [0x0D, 0x0A]
        return out
    }
}
