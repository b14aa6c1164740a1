/// Where a room's document comes from.
public enum DocumentSource: Equatable, Sendable, CustomStringConvertible {
    /// A UTF-8 text file on disk, indexed by byte offsets and never loaded whole.
    case file(String)
    /// The short guide to pagesync compiled into the daemon.
    case builtinGuide

    /// The document's name on the wire (`file=` of `HELLO` and `OK JOIN`): the file's last path
    /// component with every byte outside `A-Z a-z 0-9 . _ - + ~ , @` percent-encoded (`%20` for
    /// a space), so it is one word without control characters; `-` for the built-in guide.
    /// Pagers choose how to show a document by its extension (`.md`: markdown).
    public var wireFileName: String {
        switch self {
        case .builtinGuide: return "-"
        case .file(let path):
            let name = path.split(separator: "/").last.map(String.init) ?? ""
            let out = WireText.percentEncoded(name)
            return out.isEmpty ? "-" : out
        }
    }

    /// Whether a document named `file` (as on the wire, ``wireFileName``) is markdown: its
    /// extension is `.md` or `.markdown`, in any case. The pager and the follower page render
    /// such documents as markdown.
    public static func isMarkdownName(_ file: String?) -> Bool {
        guard let file, let dot = file.lastIndex(of: "."), dot != file.startIndex else { return false }
        let ext = file[file.index(after: dot)...].lowercased()
        return ext == "md" || ext == "markdown"
    }

    /// The file path, or `(built-in guide)`.
    public var description: String {
        switch self {
        case .file(let path): path
        case .builtinGuide: "(built-in guide)"
        }
    }
}

/// One room as configured: a name, a document and how it behaves.
public struct RoomConfig: Equatable, Sendable {
    /// The room's name on the wire (`JOIN <name>`). Valid per ``Names/isValid(_:)``.
    public var name: String
    /// The document the room serves.
    public var document: DocumentSource
    /// How the document is split into pages.
    public var pagination: Pagination
    /// Whether the room wraps around at its ends (default: it stops there).
    public var wraps: Bool
    /// The control token of a presenter room; `nil` means anyone may turn pages.
    public var token: String?
    /// The speaker notes file (`notes:`), split as the document is; `nil`: `<file>.notes` beside
    /// the document, if there is one, or the markdown document's own notes.
    public var notes: String?

    /// Creates a room configuration.
    public init(name: String, document: DocumentSource, pagination: Pagination = .formFeed, wraps: Bool = false, token: String? = nil,
                notes: String? = nil) {
        self.name = name
        self.document = document
        self.pagination = pagination
        self.wraps = wraps
        self.token = token
        self.notes = notes
    }

    /// The policy the room state machine enforces.
    public var policy: RoomPolicy { RoomPolicy(wraps: wraps, requiresToken: token != nil) }

    /// The built-in default room: the guide, paged at form feeds.
    public static let builtinGuide = RoomConfig(name: "guide", document: .builtinGuide)
}

/// The daemon's whole configuration, after the config file and the command line were merged.
public struct ServerConfig: Equatable, Sendable {
    /// Where to listen. Default `127.0.0.1:7777`.
    public var listen: ListenAddress
    /// Where the journal of every room's state is kept (`<dir>/journal`).
    public var stateDirectory: String
    /// Connections beyond this get `ERR 503` and are closed.
    public var maxClients: Int
    /// The longest command line accepted, in bytes, without its LF.
    public var maxLineLength: Int
    /// The most bytes of one page that `TEXT` sends.
    public var maxTextBytes: Int
    /// Unsent replies above which a client is no longer read (flood control).
    public var outputHighWater: Int
    /// Idle seconds before TCP keepalive probes start.
    public var keepAliveSeconds: Int
    /// When a change counts as saved (see ``Durability``).
    public var durability: Durability
    /// Seconds without a complete command line after which a connection gets `BYE` and is
    /// closed; 0 (the default) turns this off.
    public var idleTimeoutSeconds: Int
    /// Open connections one source address may hold; more get `ERR 503` and are closed.
    /// Default 1000.
    public var maxClientsPerAddress: Int
    /// Names in one `WHO` reply; `WHO <offset>` pages on. Default 100.
    public var whoPageSize: Int
    /// The rooms, in order. The first is the default room new clients join.
    public var rooms: [RoomConfig]
    /// The TLS listener, if any (beside the plaintext one; both serve the same rooms).
    public var tls: TLSConfig?
    /// Whether `AUTH` is accepted on plaintext connections from other machines (default false:
    /// tokens would cross the network in clear; such clients get `ERR 403`).
    public var plaintextAuth: Bool
    /// Where room state lives when several daemons share it (`--redis`); nil: the journal in
    /// ``stateDirectory``.
    public var redis: RedisURL?
    /// The prefix of every Redis key and channel (default `pagesync:`), so that several
    /// deployments can share one Redis.
    public var redisPrefix: String = ServerConfig.defaultRedisPrefix
    /// Where the HTTP listener of `/metrics` and `/healthz` listens; nil (the default) for
    /// none. It has no authentication: bind it to loopback (`:7779` means `127.0.0.1:7779`).
    public var metricsListen: ListenAddress?
    /// Rooms with series of their own in `/metrics` and lines in `INFO rooms`: the first this
    /// many, in configuration order (default 100), so that a server with thousands of rooms
    /// does not emit thousands of series. 0 lists none.
    public var metricsRooms: Int = ServerConfig.defaultMetricsRooms
    /// Where the web listener (the follower page and its WebSocket, `/ws`) listens; nil (the
    /// default) for none. Under socket activation, sockets named ``webSocketName`` take its
    /// place (the address is then not bound).
    public var webListen: ListenAddress?
    /// The name (`FileDescriptorName=`) of the sockets systemd passes for the web listener
    /// (`pagesyncd-web.socket`).
    public static let webSocketName = "pagesync-web"
    /// Where the same web listener is served over TLS (HTTPS, `wss://`), with the certificate
    /// of ``tls``; nil (the default) for none.
    public var webTLSListen: ListenAddress?
    /// Origins (`https://slides.example.org`) whose pages may open the WebSocket besides the
    /// web listener's own host (default none).
    public var webOrigins: [String] = []

    /// 100.
    public static let defaultMetricsRooms = 100

    /// `pagesync:`.
    public static let defaultRedisPrefix = "pagesync:"

    /// The built-in defaults: `127.0.0.1:7777`, the guide room, 4 KiB lines.
    public init(
        listen: ListenAddress = ServerConfig.defaultListen,
        stateDirectory: String,
        maxClients: Int = 10_000,
        maxLineLength: Int = 4096,
        maxTextBytes: Int = 1 << 20,
        outputHighWater: Int = 256 << 10,
        keepAliveSeconds: Int = 60,
        durability: Durability = .default,
        idleTimeoutSeconds: Int = 0,
        maxClientsPerAddress: Int = 1000,
        whoPageSize: Int = 100,
        rooms: [RoomConfig] = [.builtinGuide],
        tls: TLSConfig? = nil,
        plaintextAuth: Bool = false
    ) {
        self.listen = listen
        self.stateDirectory = stateDirectory
        self.maxClients = maxClients
        self.maxLineLength = maxLineLength
        self.maxTextBytes = maxTextBytes
        self.outputHighWater = outputHighWater
        self.keepAliveSeconds = keepAliveSeconds
        self.durability = durability
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxClientsPerAddress = maxClientsPerAddress
        self.whoPageSize = whoPageSize
        self.rooms = rooms
        self.tls = tls
        self.plaintextAuth = plaintextAuth
    }

    /// `127.0.0.1:7777`.
    public static let defaultListen = ListenAddress(host: "127.0.0.1", port: 7777)

    /// Checks the values a person could get wrong, with one clear line per problem.
    public func validate() throws(ConfigError) {
        guard !rooms.isEmpty else { throw ConfigError("no rooms configured") }
        var seen = Set<String>()
        for room in rooms {
            guard Names.isValid(room.name) else {
                throw ConfigError("room name \"\(room.name)\" is not valid: use 1 to 32 of A-Z a-z 0-9 . _ -")
            }
            guard seen.insert(room.name).inserted else { throw ConfigError("room \"\(room.name)\" is configured twice") }
            if let token = room.token, token.isEmpty || token.contains(where: { $0 == " " || $0 == "\t" }) {
                throw ConfigError("room \"\(room.name)\": token must be non-empty and without spaces")
            }
        }
        guard maxClients >= 1 else { throw ConfigError("max-clients must be at least 1, not \(maxClients)") }
        guard (64...1 << 20).contains(maxLineLength) else {
            throw ConfigError("max-line must be between 64 and 1048576 bytes, not \(maxLineLength)")
        }
        guard maxTextBytes >= 1 else { throw ConfigError("max-text must be at least 1, not \(maxTextBytes)") }
        guard keepAliveSeconds >= 1 else { throw ConfigError("keepalive must be at least 1 second, not \(keepAliveSeconds)") }
        guard !stateDirectory.isEmpty else { throw ConfigError("state-dir is empty") }
        guard idleTimeoutSeconds >= 0 else {
            throw ConfigError("idle-timeout must be 0 (off) or a number of seconds, not \(idleTimeoutSeconds)")
        }
        guard maxClientsPerAddress >= 1 else {
            throw ConfigError("max-clients-per-address must be at least 1, not \(maxClientsPerAddress)")
        }
        guard (1...100_000).contains(whoPageSize) else {
            throw ConfigError("who-page-size must be between 1 and 100000, not \(whoPageSize)")
        }
        if let tls {
            guard !tls.certificateFile.isEmpty else { throw ConfigError("tls: a certificate is needed (tls.cert or --tls-cert)") }
            guard !tls.keyFile.isEmpty else { throw ConfigError("tls: a key is needed (tls.key or --tls-key)") }
            guard TLSConfig.versions.contains(tls.minimumVersion) else {
                throw ConfigError("tls: min-version must be 1.2 or 1.3, not \"\(tls.minimumVersion)\"")
            }
            guard (1...3600).contains(tls.handshakeTimeoutSeconds) else {
                throw ConfigError("tls: handshake-timeout must be between 1 and 3600 seconds, not \(tls.handshakeTimeoutSeconds)")
            }
            if let address = tls.listen, address == listen, address.port != 0 {
                throw ConfigError("tls: listen address \(address) is also the plaintext listen address")
            }
        }
        if let metrics = metricsListen, metrics.port != 0 {
            if metrics == listen { throw ConfigError("metrics-listen \(metrics) is also the listen address") }
            if metrics == tls?.listen { throw ConfigError("metrics-listen \(metrics) is also the TLS listen address") }
        }
        if let web = webListen, web.port != 0 {
            if web == listen { throw ConfigError("web-listen \(web) is also the listen address") }
            if web == tls?.listen { throw ConfigError("web-listen \(web) is also the TLS listen address") }
            if web == metricsListen { throw ConfigError("web-listen \(web) is also the metrics-listen address") }
        }
        if let web = webTLSListen {
            guard tls != nil else {
                throw ConfigError("--web-tls-listen needs a TLS certificate: give --tls-cert and --tls-key (or tls: in the config)")
            }
            if web.port != 0 {
                if web == listen { throw ConfigError("web-tls-listen \(web) is also the listen address") }
                if web == tls?.listen { throw ConfigError("web-tls-listen \(web) is also the TLS listen address") }
                if web == metricsListen { throw ConfigError("web-tls-listen \(web) is also the metrics-listen address") }
                if web == webListen { throw ConfigError("web-tls-listen \(web) is also the web-listen address") }
            }
        }
        for origin in webOrigins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.utf8.count > 200 {
            throw ConfigError("web-origins: \"\(origin.prefix(200))\" is not an origin like https://slides.example.org")
        }
        guard (0...100_000).contains(metricsRooms) else {
            throw ConfigError("metrics-rooms must be between 0 and 100000, not \(metricsRooms)")
        }
        guard !redisPrefix.isEmpty, redisPrefix.utf8.count <= 64, redisPrefix.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ConfigError("redis-prefix must be 1 to 64 printable ASCII characters without spaces, not \"\(redisPrefix)\"")
        }
    }

    /// Room names for files given on the command line: `notes.txt` serves `notes`;
    /// a name already taken gets `-2`, `-3`, ... appended.
    public static func roomNames(forFiles paths: [String]) -> [String] {
        var taken = Set<String>()
        return paths.map { path in
            let base = Names.roomName(forFile: path)
            var name = base
            var n = 2
            while taken.contains(name) {
                let suffix = "-\(n)"
                name = String(base.prefix(32 - suffix.count)) + suffix
                n += 1
            }
            taken.insert(name)
            return name
        }
    }
}

/// A configuration problem, said in one line.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var message: String
    /// Creates an error with its one-line explanation.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
