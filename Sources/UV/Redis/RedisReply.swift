import CHiredis

/// Where a Redis server is: a TCP address (a numeric IP: names are resolved before the loop
/// runs, never on it) or a Unix socket path.
public enum RedisEndpoint: Equatable, Sendable, CustomStringConvertible {
    /// `host` is an IPv4 or IPv6 address.
    case tcp(host: String, port: Int)
    /// A Unix domain socket.
    case unix(path: String)

    /// `host:port` or the socket path.
    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): path
        }
    }
}

/// One Redis reply, copied out of hiredis's `redisReply`.
public indirect enum RedisReply: Equatable, Sendable {
    /// `+OK` and other simple strings.
    case status(String)
    /// `-ERR ...`: the text after the dash.
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// A bulk string.
    case string([UInt8])
    /// A nil bulk string or array.
    case null
    /// A multi-bulk reply.
    case array([RedisReply])

    /// A bulk or simple string as text (nil for other kinds or invalid UTF-8).
    public var text: String? {
        switch self {
        case .string(let b): String(validating: b, as: UTF8.self)
        case .status(let s): s
        case .integer(let n): String(n)
        default: nil
        }
    }

    init(_ reply: UnsafePointer<redisReply>) {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STATUS:
            self = .status(Self.text(r.str, r.len))
        case REDIS_REPLY_ERROR:
            self = .error(Self.text(r.str, r.len))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(r.integer))
        case REDIS_REPLY_STRING:
            self = .string(Self.bytes(r.str, r.len))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(r.elements))
            for i in 0..<Int(r.elements) {
                if let element = r.element[i] { items.append(RedisReply(element)) } else { items.append(.null) }
            }
            self = .array(items)
        default:
            self = .null
        }
    }

    private static func bytes(_ p: UnsafeMutablePointer<CChar>?, _ n: Int) -> [UInt8] {
        guard let p, n > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    private static func text(_ p: UnsafeMutablePointer<CChar>?, _ n: Int) -> String {
        String(decoding: bytes(p, n), as: UTF8.self)
    }
}

/// Calls `body` with hiredis's argument vectors for `args`.
func withArgv<T>(_ args: [[UInt8]], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T) -> T {
    var flat: [UInt8] = []
    flat.reserveCapacity(args.reduce(0) { $0 + $1.count + 1 })
    var offsets: [Int] = []
    for arg in args {
        offsets.append(flat.count)
        flat.append(contentsOf: arg)
        flat.append(0)
    }
    let lengths = args.map(\.count)
    return flat.withUnsafeBufferPointer { base in
        var pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
            UnsafeRawPointer(base.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
        }
        return pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { lens in body(Int32(args.count), argv.baseAddress!, lens.baseAddress!) }
        }
    }
}
