/// Where the Redis state engine connects, parsed from `redis://[user:password@]host[:port][/db]`
/// or `unix:///path/to/redis.sock[?db=N]`. User and password may be percent-encoded.
public struct RedisURL: Equatable, Sendable, CustomStringConvertible {
    /// A TCP host (name or address) and port, or a Unix socket path.
    public enum Location: Equatable, Sendable {
        /// `host` without brackets; `port` 1...65535 (default 6379).
        case tcp(host: String, port: Int)
        /// An absolute socket path.
        case unix(path: String)
    }

    /// Where the server is.
    public var location: Location
    /// The ACL user (`AUTH user password`), or nil for `AUTH password` / no AUTH.
    public var user: String?
    /// The password, or nil for no AUTH.
    public var password: String?
    /// The database number (`SELECT`), default 0.
    public var database: Int

    /// The default TCP port.
    public static let defaultPort = 6379

    /// Creates a URL from its parts.
    public init(location: Location, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.location = location
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses a URL, or explains in one line why it is not one.
    public static func parse(_ text: String) -> Result<RedisURL, ConfigError> {
        func bad(_ why: String) -> Result<RedisURL, ConfigError> {
            .failure(ConfigError("redis: \"\(redacted(text))\" \(why) (expected redis://[user:password@]host:port[/db] or unix:///path/redis.sock)"))
        }
        if text.hasPrefix("unix://") {
            var rest = Substring(text.dropFirst("unix://".count))
            var database = 0
            if let q = rest.firstIndex(of: "?") {
                let query = rest[rest.index(after: q)...]
                rest = rest[..<q]
                for pair in query.split(separator: "&") {
                    guard pair.hasPrefix("db="), let n = Int(pair.dropFirst(3)), n >= 0 else {
                        return bad("has an unknown query \"\(pair)\" (only db=N)")
                    }
                    database = n
                }
            }
            guard rest.hasPrefix("/"), rest.count > 1 else { return bad("needs an absolute socket path") }
            return .success(RedisURL(location: .unix(path: String(rest)), database: database))
        }
        if text.hasPrefix("rediss://") { return bad("uses TLS, which pagesyncd's Redis engine does not support yet") }
        guard text.hasPrefix("redis://") else { return bad("is not a redis:// or unix:// URL") }
        var rest = Substring(text.dropFirst("redis://".count))
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let u = percentDecoded(parts[0]) else { return bad("has a bad %-escape in the user") }
            user = u.isEmpty ? nil : u
            if parts.count == 2 {
                guard let p = percentDecoded(parts[1]) else { return bad("has a bad %-escape in the password") }
                password = p
            }
            if user != nil && password == nil { return bad("names a user without a password") }
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !db.isEmpty {
                guard db.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(db), n <= 1_000_000 else {
                    return bad("has a database \"\(db)\" that is not a number")
                }
                database = n
            }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return bad("has an unclosed [") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return bad("has text after ]") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { return bad("has no host") }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(portText), (1...65535).contains(n) else {
                return bad("has a port that is not 1 to 65535")
            }
            port = n
        }
        return .success(RedisURL(location: .tcp(host: String(host), port: port), user: user, password: password, database: database))
    }

    /// The URL with the password shown as `***` (for logs).
    public var description: String {
        switch location {
        case .unix(let path):
            return "unix://\(path)" + (database == 0 ? "" : "?db=\(database)")
        case .tcp(let host, let port):
            let auth = password == nil ? "" : "\(user ?? ""):***@"
            let h = host.contains(":") ? "[\(host)]" : host
            return "redis://\(auth)\(h):\(port)" + (database == 0 ? "" : "/\(database)")
        }
    }

    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@"), let colon = text.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + "://***" + String(text[at...])
    }

    private static func percentDecoded(_ s: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = s.utf8.makeIterator()
        while let b = bytes.next() {
            if b == UInt8(ascii: "%") {
                guard let h = bytes.next(), let l = bytes.next(), let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16) else { return nil }
                out.append(v)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
