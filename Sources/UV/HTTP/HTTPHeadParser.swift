import CHTTPParser

/// Reads HTTP/1.x request heads with Node's http-parser (Debian's libhttp-parser), a byte at a
/// time as they arrive: no I/O, so the tests drive it with plain bytes.
///
/// It reads heads only. Once a head is complete, ``parse(_:)`` returns it with the number of
/// bytes it took, and the parser stops there: what follows (the next request of a pipelining
/// client, a body, the bytes of an upgraded protocol) is the caller's. ``reset()`` readies it
/// for the next head. Bodies are never parsed (a connection closes after a request with one).
public final class HTTPHeadParser {
    /// What ``parse(_:)`` found.
    public enum Outcome: Equatable, Sendable {
        /// Every byte given was taken and the head is not complete yet.
        case needMore
        /// A whole head, and how many of the bytes given it took (the rest follow it).
        case head(HTTPRequestHead, consumed: Int)
        /// The bytes are no HTTP/1.x request head; why, in a few words. The parser is spent:
        /// close the connection (after a `400`).
        case invalid(String)
    }

    private let parser: UnsafeMutablePointer<http_parser>
    private var url: [UInt8] = []
    private var headers: [(name: [UInt8], value: [UInt8])] = []
    private var inValue = false
    private var complete: HTTPRequestHead?
    private var failed: String?

    /// A parser waiting for a request head.
    public init() {
        parser = .allocate(capacity: 1)
        reset()
    }

    deinit { parser.deallocate() }

    /// Readies the parser for a new head, forgetting anything of the one before.
    public func reset() {
        http_parser_init(parser, HTTP_REQUEST)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        url.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        inValue = false
        complete = nil
        failed = nil
    }

    /// Parses `bytes`, the next bytes of the connection, up to the end of a head.
    public func parse(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        if let failed { return .invalid(failed) }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .needMore }
        let taken = withUnsafePointer(to: Self.settings) { settings in
            http_parser_execute(parser, settings, base.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        if let head = complete {
            // Paused in on_headers_complete, http-parser stops at the LF that ends the head,
            // without counting it.
            return .head(head, consumed: taken < bytes.count && bytes[taken] == 0x0A ? taken + 1 : taken)
        }
        let code = pagesync_http_errno(parser)
        if code != HPE_OK {
            failed = Self.describe(code)
            return .invalid(failed!)
        }
        return .needMore
    }

    /// ``parse(_:)`` of an array's bytes.
    public func parse(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// http-parser's own description, for the errors a client can cause.
    private static func describe(_ code: http_errno) -> String {
        switch code {
        case HPE_INVALID_METHOD: "invalid method"
        case HPE_INVALID_URL: "invalid request target"
        case HPE_INVALID_VERSION: "invalid HTTP version"
        case HPE_INVALID_HEADER_TOKEN: "invalid character in a header field"
        case HPE_LF_EXPECTED, HPE_STRICT: "invalid line end"
        case HPE_HEADER_OVERFLOW: "request head too large"
        case HPE_INVALID_CONSTANT, HPE_INVALID_INTERNAL_STATE: "not an HTTP request"
        case HPE_INVALID_CONTENT_LENGTH, HPE_UNEXPECTED_CONTENT_LENGTH: "invalid Content-Length"
        case HPE_INVALID_TRANSFER_ENCODING: "invalid Transfer-Encoding"
        default: String(cString: http_errno_description(code))
        }
    }

    // MARK: - http-parser's callbacks

    private static func owner(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTPHeadParser {
        Unmanaged<HTTPHeadParser>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    private static func bytes(_ at: UnsafePointer<CChar>?, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: at, count: at == nil ? 0 : length)
    }

    private func headComplete() {
        let p = parser.pointee
        let method = String(cString: http_method_str(http_method(rawValue: UInt32(p.method))))
        let chunked = p.flags & UInt32(F_CHUNKED.rawValue) != 0 || p.uses_transfer_encoding != 0
        let sized = p.flags & UInt32(F_CONTENTLENGTH.rawValue) != 0 && p.content_length > 0 && p.content_length != UInt64.max
        complete = HTTPRequestHead(
            method: method,
            target: String(decoding: url, as: UTF8.self),
            version: HTTPVersion(major: Int(p.http_major), minor: Int(p.http_minor)),
            headers: headers.map { HTTPHeader(String(decoding: $0.name, as: UTF8.self), Self.trimmed($0.value)) },
            keepAlive: http_should_keep_alive(parser) != 0,
            hasBody: chunked || sized,
            upgrade: p.upgrade != 0)
        // Stop here: what follows the head is the caller's.
        http_parser_pause(parser, 1)
    }

    private static func trimmed(_ value: [UInt8]) -> String {
        var slice = value[...]
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        return String(decoding: slice, as: UTF8.self)
    }

    private static let settings: http_parser_settings = {
        var s = http_parser_settings()
        http_parser_settings_init(&s)
        s.on_url = { parser, at, length in
            owner(parser).url.append(contentsOf: bytes(at, length))
            return 0
        }
        s.on_header_field = { parser, at, length in
            let me = owner(parser)
            if me.inValue || me.headers.isEmpty {
                me.headers.append(([], []))
                me.inValue = false
            }
            me.headers[me.headers.count - 1].name.append(contentsOf: bytes(at, length))
            return 0
        }
        s.on_header_value = { parser, at, length in
            let me = owner(parser)
            me.inValue = true
            if me.headers.isEmpty { me.headers.append(([], [])) }
            me.headers[me.headers.count - 1].value.append(contentsOf: bytes(at, length))
            return 0
        }
        s.on_headers_complete = { parser in
            owner(parser).headComplete()
            return 0
        }
        return s
    }()
}
