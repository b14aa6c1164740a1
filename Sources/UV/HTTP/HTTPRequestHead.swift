/// An HTTP version, `HTTP/<major>.<minor>`.
public struct HTTPVersion: Equatable, Comparable, Sendable, CustomStringConvertible {
    /// The major version (1 for HTTP/1.x).
    public var major: Int
    /// The minor version.
    public var minor: Int

    /// `HTTP/major.minor`.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http10 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http11 = HTTPVersion(major: 1, minor: 1)

    public static func < (a: HTTPVersion, b: HTTPVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }

    /// `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// One header field as received or sent: its name as written, and its value without the
/// blanks around it.
public struct HTTPHeader: Equatable, Sendable {
    /// The field name (compare case-insensitively).
    public var name: String
    /// The field value.
    public var value: String

    /// A header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An HTTP request's head: its request line and header fields, as ``HTTPHeadParser`` read them.
/// A value with no I/O: routing functions take it and decide.
public struct HTTPRequestHead: Equatable, Sendable {
    /// The method, upper case as sent (`GET`, `HEAD`, `POST` ...).
    public var method: String
    /// The request target as sent (`/metrics`, `/healthz?verbose`).
    public var target: String
    /// The request's HTTP version.
    public var version: HTTPVersion
    /// The header fields, in the order received.
    public var headers: [HTTPHeader]
    /// Whether the client lets the connection stay open after the response: HTTP/1.1 unless
    /// `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool
    /// Whether a body follows the head (`Content-Length` above 0, or `Transfer-Encoding`).
    public var hasBody: Bool
    /// Whether the client asks to switch protocols (`Connection: upgrade` with `Upgrade:`), or
    /// sent `CONNECT`.
    public var upgrade: Bool

    /// A head holding exactly these values.
    public init(method: String, target: String, version: HTTPVersion = .http11, headers: [HTTPHeader] = [],
                keepAlive: Bool = true, hasBody: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.hasBody = hasBody
        self.upgrade = upgrade
    }

    /// The target's path: up to its `?` or `#`.
    public var path: Substring {
        target[..<(target.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? target.endIndex)]
    }

    /// The value of the first header field named `name` (case-insensitively), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Why no server should answer this head as it stands, or nil: HTTP/1.1 needs exactly one
    /// `Host` field (RFC 9112, 3.2: a request without one, or with several, gets 400).
    public var violation: String? {
        let hosts = headers.count { $0.name.lowercased() == "host" }
        if version >= .http11 && hosts == 0 { return "HTTP/1.1 request without a Host header" }
        if hosts > 1 { return "more than one Host header" }
        return nil
    }
}
