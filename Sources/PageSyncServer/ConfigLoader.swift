import Configuration
import PageSyncCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Settings given on the command line. Each one that is set overrides the
/// config file.
public struct CommandLineOverrides: Sendable, Equatable {
    /// Documents to serve, one room per file (replacing the configured rooms).
    public var files: [String] = []
    /// `--listen`.
    public var listen: ListenAddress?
    /// `--state-dir`.
    public var stateDirectory: String?
    /// `--max-clients`.
    public var maxClients: Int?
    /// `--max-line`.
    public var maxLineLength: Int?
    /// `--split`, for the rooms of `files` (nil: each by its extension, see ``Pagination/defaultFor(path:)``).
    public var pagination: Pagination?
    /// `--wrap`, for the rooms of `files`.
    public var wraps: Bool = false
    /// `--token`, for the rooms of `files`.
    public var token: String?
    /// `--token-file`, for the rooms of `files`: a path, or `credential:<name>` for
    /// `$CREDENTIALS_DIRECTORY/<name>`; read when the configuration is loaded.
    public var tokenFile: String?
    /// `--durability` (or `--no-fsync`, its deprecated alias for `batch`).
    public var durability: Durability?
    /// `--idle-timeout`.
    public var idleTimeoutSeconds: Int?
    /// `--max-clients-per-address`.
    public var maxClientsPerAddress: Int?
    /// `--who-page-size`.
    public var whoPageSize: Int?
    /// `--tls-listen`.
    public var tlsListen: ListenAddress?
    /// `--tls-cert`.
    public var tlsCertificateFile: String?
    /// `--tls-key`.
    public var tlsKeyFile: String?
    /// `--tls-ca`.
    public var tlsCAFile: String?
    /// `--tls-min-version`.
    public var tlsMinimumVersion: String?
    /// `--tls-handshake-timeout`.
    public var tlsHandshakeTimeoutSeconds: Int?
    /// `--allow-plaintext-auth`.
    public var allowPlaintextAuth: Bool = false
    /// `--redis`.
    public var redis: RedisURL?
    /// `--redis-prefix`.
    public var redisPrefix: String?
    /// `--metrics-listen`.
    public var metricsListen: ListenAddress?
    /// `--metrics-rooms`.
    public var metricsRooms: Int?
    /// `--web-listen`.
    public var webListen: ListenAddress?
    /// `--web-tls-listen`.
    public var webTLSListen: ListenAddress?

    /// No overrides.
    public init() {}
}

/// Builds the daemon's ``ServerConfig`` from built-in defaults, an optional
/// YAML config file (read with apple/swift-configuration) and the command line.
///
/// The config file's keys are documented in `Config/pagesyncd.yaml`.
public enum ConfigLoader {
    /// Loads and validates the configuration.
    /// - Throws: ``ConfigError`` with a one-line message naming the bad key or value.
    public static func load(
        configFile: String?, overrides: CommandLineOverrides,
        environment: [String: String] = SystemdEnvironment.current()
    ) async throws -> ServerConfig {
        var config = ServerConfig(stateDirectory: defaultStateDirectory(environment: environment))
        if let configFile {
            let reader: ConfigReader
            do {
                reader = ConfigReader(provider: try await FileProvider<YAMLFileSnapshot>(filePath: FilePath(configFile)))
            } catch {
                throw ConfigError("\(configFile): \(error)")
            }
            try apply(reader, file: configFile, environment: environment, to: &config)
        }
        var overrides = overrides
        if let tokenFile = overrides.tokenFile {
            let key = ConfigError("--token-file ")
            overrides.token = try readToken(tokenPath(tokenFile, configFile: nil, environment: environment, key: key), key: key)
        }
        apply(overrides, to: &config)
        try config.validate()
        return config
    }

    /// `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`), else
    /// `$XDG_STATE_HOME/pagesync`, else `~/.local/state/pagesync`, else (no `$HOME`)
    /// `/var/lib/pagesync`.
    public static func defaultStateDirectory(environment: [String: String]) -> String {
        if let dirs = environment["STATE_DIRECTORY"], let first = dirs.split(separator: ":").first {
            return String(first)
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/pagesync" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/pagesync" }
        return "/var/lib/pagesync"
    }

    static func apply(_ overrides: CommandLineOverrides, to config: inout ServerConfig) {
        if let listen = overrides.listen { config.listen = listen }
        if let dir = overrides.stateDirectory { config.stateDirectory = dir }
        if let n = overrides.maxClients { config.maxClients = n }
        if let n = overrides.maxLineLength { config.maxLineLength = n }
        if let mode = overrides.durability { config.durability = mode }
        if let n = overrides.idleTimeoutSeconds { config.idleTimeoutSeconds = n }
        if let n = overrides.maxClientsPerAddress { config.maxClientsPerAddress = n }
        if let n = overrides.whoPageSize { config.whoPageSize = n }
        if overrides.allowPlaintextAuth { config.plaintextAuth = true }
        if overrides.tlsListen != nil || overrides.tlsCertificateFile != nil || overrides.tlsKeyFile != nil
            || overrides.tlsCAFile != nil || overrides.tlsMinimumVersion != nil || overrides.tlsHandshakeTimeoutSeconds != nil
        {
            var tls = config.tls ?? TLSConfig(listen: nil, certificateFile: "", keyFile: "")
            if let listen = overrides.tlsListen { tls.listen = listen }
            if let file = overrides.tlsCertificateFile { tls.certificateFile = absolute(file, relativeTo: nil) }
            if let file = overrides.tlsKeyFile { tls.keyFile = absolute(file, relativeTo: nil) }
            if let file = overrides.tlsCAFile { tls.clientCAFile = absolute(file, relativeTo: nil) }
            if let version = overrides.tlsMinimumVersion { tls.minimumVersion = version }
            if let seconds = overrides.tlsHandshakeTimeoutSeconds { tls.handshakeTimeoutSeconds = seconds }
            config.tls = tls
        }
        if let url = overrides.redis { config.redis = url }
        if let prefix = overrides.redisPrefix { config.redisPrefix = prefix }
        if let address = overrides.metricsListen { config.metricsListen = address }
        if let n = overrides.metricsRooms { config.metricsRooms = n }
        if let address = overrides.webListen { config.webListen = address }
        if let address = overrides.webTLSListen { config.webTLSListen = address }
        if !overrides.files.isEmpty {
            let names = ServerConfig.roomNames(forFiles: overrides.files)
            config.rooms = zip(names, overrides.files).map { name, file in
                RoomConfig(
                    name: name, document: .file(absolute(file, relativeTo: nil)),
                    pagination: overrides.pagination ?? Pagination.defaultFor(path: file), wraps: overrides.wraps,
                    token: overrides.token)
            }
        }
    }

    private static func apply(_ reader: ConfigReader, file: String, environment: [String: String], to config: inout ServerConfig) throws {
        let keys = Keys(reader: reader, file: file)
        if let text = try keys.string("listen") {
            guard let address = ListenAddress(parsing: text) else {
                throw keys.error("listen", "\"\(text)\" is not HOST:PORT (for example 127.0.0.1:7777 or [::1]:7777)")
            }
            config.listen = address
        }
        if let dir = try keys.string("state-dir") { config.stateDirectory = absolute(dir, relativeTo: file) }
        if let n = try keys.int("max-clients") { config.maxClients = n }
        if let n = try keys.int("max-line") { config.maxLineLength = n }
        if let n = try keys.int("max-text") { config.maxTextBytes = n }
        if let n = try keys.int("keepalive") { config.keepAliveSeconds = n }
        if let text = try keys.string("durability") {
            guard let mode = Durability(parsing: text) else {
                throw keys.error("durability", "\"\(text)\" is not batch or always")
            }
            config.durability = mode
        } else if let b = try keys.bool("fsync") {
            // Before the journal: `fsync: true` synced every change, `false` none.
            config.durability = b ? .always : .batch
        }
        if let n = try keys.int("idle-timeout") { config.idleTimeoutSeconds = n }
        if let n = try keys.int("max-clients-per-address") { config.maxClientsPerAddress = n }
        if let n = try keys.int("who-page-size") { config.whoPageSize = n }
        if let b = try keys.bool("allow-plaintext-auth") { config.plaintextAuth = b }
        if let text = try keys.string("metrics-listen") {
            guard let address = ListenAddress(parsing: text) else {
                throw keys.error("metrics-listen", "\"\(text)\" is not HOST:PORT (for example 127.0.0.1:7779)")
            }
            config.metricsListen = address
        }
        if let n = try keys.int("metrics-rooms") { config.metricsRooms = n }
        if let text = try keys.string("web-listen") {
            guard let address = ListenAddress(parsing: text) else {
                throw keys.error("web-listen", "\"\(text)\" is not HOST:PORT (for example 127.0.0.1:8080)")
            }
            config.webListen = address
        }
        if let text = try keys.string("web-tls-listen") {
            guard let address = ListenAddress(parsing: text) else {
                throw keys.error("web-tls-listen", "\"\(text)\" is not HOST:PORT (for example 0.0.0.0:8443)")
            }
            config.webTLSListen = address
        }
        if let origins = try keys.stringArray("web-origins") { config.webOrigins = origins }
        try applyTLS(keys, file: file, environment: environment, to: &config)
        try applyEngine(keys, to: &config)
        guard let names = try keys.stringArray("rooms") else { return }
        guard !names.isEmpty else { throw keys.error("rooms", "the list is empty") }
        config.rooms = try names.map { name in
            guard Names.isValid(name) else {
                throw keys.error("rooms", "\"\(name)\" is not a valid room name (1 to 32 of A-Z a-z 0-9 . _ -)")
            }
            let prefix = "room.\(name)."
            let document: DocumentSource
            if let path = try keys.string(prefix + "file") {
                document = path == "builtin:guide" ? .builtinGuide : .file(absolute(path, relativeTo: file))
            } else {
                throw keys.error(prefix + "file", "missing: each room needs a file")
            }
            var pagination = Pagination.formFeed
            if case .file(let path) = document { pagination = Pagination.defaultFor(path: path) }
            if let split = try keys.string(prefix + "split") {
                guard let p = Pagination(parsing: split) else {
                    throw keys.error(prefix + "split", "\"\(split)\" is not markdown, headings, formfeed, separator:<line> or lines:<n>")
                }
                pagination = p
            }
            var token = try keys.string(prefix + "token", secret: true)
            if let tokenFile = try keys.string(prefix + "token-file") {
                let path = try tokenPath(tokenFile, configFile: file, environment: environment, key: keys.error(prefix + "token-file", ""))
                token = try readToken(path, key: keys.error(prefix + "token-file", ""))
            }
            let notes = try keys.string(prefix + "notes").map { absolute($0, relativeTo: file) }
            return RoomConfig(
                name: name, document: document, pagination: pagination,
                wraps: try keys.bool(prefix + "wrap") ?? false, token: token, notes: notes)
        }
    }

    /// A `token-file` (or `tls.cert`, `tls.key`, `tls.ca`) value as a path: `credential:<name>` is the systemd credential
    /// `<name>` (`$CREDENTIALS_DIRECTORY/<name>`, from `LoadCredential=` in the unit);
    /// anything else is a file path, relative to the config file's directory (to the working
    /// directory for `--token-file`, whose `configFile` is `nil`).
    static func tokenPath(_ value: String, configFile: String?, environment: [String: String], key: ConfigError) throws -> String {
        let prefix = "credential:"
        guard value.hasPrefix(prefix) else { return absolute(value, relativeTo: configFile) }
        let name = String(value.dropFirst(prefix.count))
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw ConfigError("\(key.message)\"\(value)\": a credential name is not empty and has no /")
        }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw ConfigError("\(key.message)\(value): $CREDENTIALS_DIRECTORY is not set; add LoadCredential=\(name):<file> to the systemd unit")
        }
        return directory + "/" + name
    }

    /// The `tls:` section: `listen`, `cert`, `key`, `ca`, `min-version`, `ciphers`, `ciphersuites`,
    /// `handshake-timeout`.
    /// `cert`, `key` and `ca` may name systemd credentials (`credential:<name>`), like `token-file`.
    private static func applyTLS(_ keys: Keys, file: String, environment: [String: String], to config: inout ServerConfig) throws {
        let listenText = try keys.string("tls.listen")
        let cert = try keys.string("tls.cert")
        let key = try keys.string("tls.key")
        let ca = try keys.string("tls.ca")
        let version = try keys.string("tls.min-version")
        let ciphers = try keys.string("tls.ciphers")
        let suites = try keys.string("tls.ciphersuites")
        let handshakeTimeout = try keys.int("tls.handshake-timeout")
        guard listenText != nil || cert != nil || key != nil || ca != nil || version != nil || ciphers != nil || suites != nil
            || handshakeTimeout != nil
        else { return }
        var listen: ListenAddress?
        if let listenText {
            guard let address = ListenAddress(parsing: listenText) else {
                throw keys.error("tls.listen", "\"\(listenText)\" is not HOST:PORT (for example 0.0.0.0:7778)")
            }
            listen = address
        }
        config.tls = TLSConfig(
            listen: listen,
            certificateFile: try cert.map { try tokenPath($0, configFile: file, environment: environment, key: keys.error("tls.cert", "")) } ?? "",
            keyFile: try key.map { try tokenPath($0, configFile: file, environment: environment, key: keys.error("tls.key", "")) } ?? "",
            clientCAFile: try ca.map { try tokenPath($0, configFile: file, environment: environment, key: keys.error("tls.ca", "")) },
            minimumVersion: version ?? "1.2", ciphers: ciphers, cipherSuites: suites,
            handshakeTimeoutSeconds: handshakeTimeout ?? TLSConfig.defaultHandshakeTimeoutSeconds)
    }

    /// `engine: journal | redis`, `redis: URL`, `redis-prefix: PREFIX`.
    private static func applyEngine(_ keys: Keys, to config: inout ServerConfig) throws {
        let engine = try keys.string("engine")
        let url = try keys.string("redis", secret: true)
        if let prefix = try keys.string("redis-prefix") { config.redisPrefix = prefix }
        switch engine {
        case nil, "redis":
            guard let url else {
                if engine == "redis" { throw keys.error("redis", "missing: engine: redis needs redis: URL") }
                return
            }
            switch RedisURL.parse(url) {
            case .success(let parsed): config.redis = parsed
            case .failure(let error): throw keys.error("redis", error.message)
            }
        case "journal":
            config.redis = nil
        case let other?:
            throw keys.error("engine", "\"\(other)\" is not journal or redis")
        }
    }

    private static func readToken(_ path: String, key: ConfigError) throws -> String {
        guard let file = fopen(path, "r") else {
            throw ConfigError("\(key.message)\(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else {
            throw ConfigError("\(key.message)\(path): empty")
        }
        let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return String(line.trimmingSuffix { $0 == "\n" || $0 == "\r" || $0 == " " })
    }

    /// `path` made absolute: relative to the config file's directory, or to the
    /// working directory for the command line.
    static func absolute(_ path: String, relativeTo configFile: String?) -> String {
        if path.hasPrefix("/") { return path }
        if let configFile, let slash = configFile.lastIndex(of: "/") {
            return String(configFile[...slash]) + path
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return cwd == "/" ? "/" + path : cwd + "/" + path
    }

    /// Typed reads that tell a missing key from a mistyped one.
    private struct Keys {
        let reader: ConfigReader
        let file: String

        func error(_ key: String, _ message: String) -> ConfigError {
            ConfigError("\(file): \(key): \(message)")
        }

        func string(_ key: String, secret: Bool = false) throws -> String? {
            guard let value = reader.string(forKey: ConfigKey(key), isSecret: secret) else {
                if reader.stringArray(forKey: ConfigKey(key)) != nil { throw error(key, "expected one value, not a list") }
                return nil
            }
            return value
        }

        func int(_ key: String) throws -> Int? {
            guard let raw = try string(key) else { return nil }
            guard let value = reader.int(forKey: ConfigKey(key)) else { throw error(key, "\"\(raw)\" is not a whole number") }
            return value
        }

        func bool(_ key: String) throws -> Bool? {
            guard let raw = try string(key) else { return nil }
            guard let value = reader.bool(forKey: ConfigKey(key)) else { throw error(key, "\"\(raw)\" is not true or false") }
            return value
        }

        func stringArray(_ key: String) throws -> [String]? {
            if let list = reader.stringArray(forKey: ConfigKey(key)) { return list }
            if let raw = reader.string(forKey: ConfigKey(key)) { throw error(key, "expected a list, not \"\(raw)\"") }
            return nil
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}
