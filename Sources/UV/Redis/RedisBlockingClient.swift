import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// A blocking Redis connection (hiredis's synchronous API), for use before an event loop runs
/// (reading state at start-up) and in tests. Never use it on a running loop's thread.
public final class RedisBlockingClient {
    private let context: UnsafeMutablePointer<redisContext>

    /// Connects to `endpoint`, waiting at most `timeoutSeconds` for the connection and for each
    /// reply. Throws a one-line reason.
    public init(endpoint: RedisEndpoint, timeoutSeconds: Int = 5) throws(RedisFailure) {
        let tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        let made: UnsafeMutablePointer<redisContext>?
        switch endpoint {
        case .tcp(let host, let port): made = redisConnectWithTimeout(host, Int32(port), tv)
        case .unix(let path): made = redisConnectUnixWithTimeout(path, tv)
        }
        guard let c = made else { throw RedisFailure("out of memory") }
        if c.pointee.err != 0 {
            let reason = Self.errorText(c)
            redisFree(c)
            throw RedisFailure(reason)
        }
        redisSetTimeout(c, tv)
        context = c
    }

    deinit { redisFree(context) }

    /// Sends one command and waits for its reply (an error reply is returned, not thrown).
    /// Throws when the connection failed.
    public func command(_ args: [String]) throws(RedisFailure) -> RedisReply {
        let raw = withArgv(args.map { Array($0.utf8) }) { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let raw else { throw RedisFailure(Self.errorText(context)) }
        defer { freeReplyObject(raw) }
        return RedisReply(UnsafePointer(raw.assumingMemoryBound(to: redisReply.self)))
    }

    private static func errorText(_ c: UnsafePointer<redisContext>) -> String {
        var errstr = c.pointee.errstr
        let text = withUnsafeBytes(of: &errstr) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return text.isEmpty ? "connection failed" : text
    }
}

/// A Redis connection problem, in one line.
public struct RedisFailure: Error, Sendable, CustomStringConvertible {
    /// The one-line reason.
    public var description: String
    /// A failure with this reason.
    public init(_ description: String) { self.description = description }
}

extension RedisEndpoint {
    /// `host` resolved to a numeric address with a blocking `getaddrinfo` (call it before the
    /// loop runs), so that connecting later never blocks the loop. Throws a one-line reason.
    public static func resolving(host: String, port: Int) throws(RedisFailure) -> RedisEndpoint {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw RedisFailure("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        guard let addr = first.pointee.ai_addr, let address = SocketAddress(pointer: addr) else {
            throw RedisFailure("cannot resolve \(host): no usable address")
        }
        return .tcp(host: address.host, port: port)
    }
}
