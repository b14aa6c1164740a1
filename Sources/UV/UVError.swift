import CLibUV

/// A libuv error: the negative `errno`-style code returned by a libuv call.
///
/// Two errors are equal when their codes are equal. `name` and `description`
/// come from libuv (`uv_err_name`, `uv_strerror`) and are stable for a given code,
/// unless the error carries a `detail` (TLS failures), which `description` then is.
public struct UVError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The libuv error code (always negative, e.g. `UV_ECONNRESET`).
    public let code: Int32
    /// A one-line explanation beyond the code, e.g. "certificate has expired" for a TLS failure.
    public let detail: String?

    /// Wraps a libuv error code. `code` should be negative, as libuv returns it.
    public init(code: Int32) {
        self.code = code
        self.detail = nil
    }

    /// A TLS failure (`EPROTO`) explained by `error`.
    public init(tls error: TLSError) {
        self.code = UV_EPROTO.rawValue
        self.detail = error.message
    }

    /// Equal when the codes are equal.
    public static func == (lhs: UVError, rhs: UVError) -> Bool { lhs.code == rhs.code }

    /// The symbolic name of the error, e.g. `"ECONNRESET"`.
    public var name: String {
        guard let cString = uv_err_name(code) else { return "UNKNOWN(\(code))" }
        return String(cString: cString)
    }

    /// A human-readable message, e.g. `"ECONNRESET: connection reset by peer"`.
    public var description: String {
        if let detail { return detail }
        guard let cString = uv_strerror(code) else { return name }
        return "\(name): \(String(cString: cString))"
    }

    /// End of stream (`UV_EOF`).
    public static let endOfFile = UVError(code: UV_EOF.rawValue)
    /// Operation cancelled, e.g. a pending write when its handle was closed (`UV_ECANCELED`).
    public static let cancelled = UVError(code: UV_ECANCELED.rawValue)
    /// Invalid argument, e.g. an unparsable IP address (`UV_EINVAL`).
    public static let invalidArgument = UVError(code: UV_EINVAL.rawValue)
    /// Broken pipe: the peer is gone (`UV_EPIPE`).
    public static let brokenPipe = UVError(code: UV_EPIPE.rawValue)
    /// Connection reset by peer (`UV_ECONNRESET`).
    public static let connectionReset = UVError(code: UV_ECONNRESET.rawValue)
    /// Connection refused (`UV_ECONNREFUSED`).
    public static let connectionRefused = UVError(code: UV_ECONNREFUSED.rawValue)
    /// Address already in use (`UV_EADDRINUSE`).
    public static let addressInUse = UVError(code: UV_EADDRINUSE.rawValue)

    /// Throws `UVError(code: result)` when `result` is negative; otherwise returns it.
    @discardableResult
    static func check(_ result: Int32) throws(UVError) -> Int32 {
        if result < 0 { throw UVError(code: result) }
        return result
    }
}
