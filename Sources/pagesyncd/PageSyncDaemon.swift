import ArgumentParser
import Logging
import PageSyncCore
import PageSyncServer

#if canImport(Glibc)
import Glibc
#endif

/// `pagesyncd`: the command line, wired to ``Daemon``.
@main
struct PageSyncDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pagesyncd",
        abstract: "Keep everyone in a room on the same page of a document.",
        discussion: """
            Serves each FILE as a room, named after the file without its extension \
            (notes.txt serves room "notes"); the first room is where new clients land. \
            With no FILE and no --config, serves a built-in guide as room "guide" \
            on 127.0.0.1:7777.

            Pages: markdown (.md, .markdown) by its structure: top-level rules (---, ***, \
            ___) and <!-- end_slide --> end a page, never a --- in fenced code or a list; \
            with none, its top-level headings start pages (#, or ## under a single #); YAML \
            front matter is no page, and its title: names the room to clients (files up to \
            8 MiB; a larger one splits at --- lines). Other text splits at form feeds; \
            --split headings splits it at man-page section headings (NAME, SEE ALSO). A \
            document left as one long page is logged once, with the --split that would \
            split it.

            Clients speak a line protocol over TCP (see PROTOCOL.md), for example:
              printf 'next\\n' | nc -q1 127.0.0.1 7777

            TLS: with --tls-listen, --tls-cert and --tls-key (or a tls: section in the \
            config) a second listener speaks the same protocol over TLS, for example:
              openssl s_client -quiet -connect HOST:7778
            AUTH is refused on plaintext connections from other machines unless \
            --allow-plaintext-auth is given. If TLS is configured but cannot be set up, \
            pagesyncd exits instead of serving without it.

            Monitoring: INFO on the line protocol reports the server, its clients, rooms, \
            state engine and counters, Redis-style; with --metrics-listen, Prometheus \
            scrapes GET /metrics and a health check reads GET /healthz (see README.md, \
            "Monitoring").

            Signals: SIGTERM or SIGINT saves, says BYE and exits; SIGHUP reloads the \
            config, the TLS certificate and key, and re-indexes every document without \
            dropping clients; `pagesyncd --reload PID` sends it (the systemd units' \
            ExecReload=, without /bin/kill).
            """,
        version: PageSyncVersion.current)

    @Argument(help: "Documents to serve, one room per file (UTF-8 text).")
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("YAML config file (see Config/pagesyncd.yaml).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Address to listen on (default 127.0.0.1:7777; port 0 picks a free one).", valueName: "host:port"))
    var listen: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where the journal of every room's page and version is kept (default $STATE_DIRECTORY, else $XDG_STATE_HOME/pagesync, else ~/.local/state/pagesync, or /var/lib/pagesync without $HOME). One daemon per state dir: a second one is refused.", valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("max-clients"), help: ArgumentHelp("Connections beyond this get ERR 503 (default 10000; at most the open-file limit minus 32, 2 per room and 65 each with --metrics-listen, --web-listen and --web-tls-listen).", valueName: "n"))
    var maxClients: Int?

    @Option(name: .customLong("max-line"), help: ArgumentHelp("Longest command line in bytes (default 4096).", valueName: "bytes"))
    var maxLine: Int?

    @Option(name: .customLong("max-clients-per-address"), help: ArgumentHelp("Connections one source address may hold; more get ERR 503 (default 1000).", valueName: "n"))
    var maxClientsPerAddress: Int?

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Close a connection with BYE after this many seconds without a command (default 0: never).", valueName: "seconds"))
    var idleTimeout: Int?

    @Option(name: .customLong("who-page-size"), help: ArgumentHelp("Names per WHO reply; WHO <offset> pages on (default 100).", valueName: "n"))
    var whoPageSize: Int?

    @Option(name: .long, help: ArgumentHelp("How every FILE room is paged: markdown (top-level --- rules and <!-- end_slide --> end pages, else top-level headings do; front matter is no page), headings (markdown's top-level headings, or man-page section headings in plain text), formfeed, separator:<line> or lines:<n> (default: by extension, markdown for .md and .markdown, else formfeed).", valueName: "mode"))
    var split: String?

    @Flag(name: .long, help: "FILE rooms wrap around at their ends instead of stopping.")
    var wrap = false

    @Option(name: .long, help: ArgumentHelp("FILE rooms are presenter rooms: turning pages needs AUTH <token>.", valueName: "token"))
    var token: String?

    @Option(name: .customLong("token-file"), help: ArgumentHelp("Like --token, but read from the file's first line, so it is not in ps; credential:<name> reads $CREDENTIALS_DIRECTORY/<name> (systemd LoadCredential=).", valueName: "path"))
    var tokenFile: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (default info).", valueName: "level"))
    var logLevel: String?

    @Option(name: .customLong("tls-listen"), help: ArgumentHelp("Address for TLS clients, beside --listen (default: no TLS listener).", valueName: "host:port"))
    var tlsListen: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("TLS certificate chain, PEM (leaf first).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("TLS private key, PEM.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .customLong("tls-ca"), help: ArgumentHelp("Require TLS clients to present a certificate signed by a CA in this PEM file (default: no client certificates).", valueName: "file"))
    var tlsCA: String?

    @Option(name: .customLong("tls-min-version"), help: ArgumentHelp("Oldest TLS version accepted: 1.2 or 1.3 (default 1.2).", valueName: "version"))
    var tlsMinVersion: String?

    @Option(name: .customLong("tls-handshake-timeout"), help: ArgumentHelp("Close a TLS connection that has not completed its handshake after this many seconds, 1 to 3600 (default 10).", valueName: "seconds"))
    var tlsHandshakeTimeout: Int?

    @Flag(name: .customLong("allow-plaintext-auth"), help: "Accept AUTH on plaintext connections from other machines (default: refused; tokens would cross the network in clear).")
    var allowPlaintextAuth = false

    @Option(name: .long, help: ArgumentHelp(
        "When a change counts as saved: batch (default) writes the journal before replying and syncs it once a second, so a crash loses nothing acknowledged and a power loss at most about a second; always replies only after an fdatasync covering the change (group commit).",
        valueName: "mode"))
    var durability: String?

    @Option(name: .long, help: ArgumentHelp(
        "Keep room state in Redis, shared by every pagesyncd using the same Redis and prefix: redis://[user:password@]host:port[/db] or unix:///path/redis.sock[?db=N] (default: none; the journal in --state-dir).",
        valueName: "url"))
    var redis: String?

    @Option(name: .customLong("redis-prefix"), help: ArgumentHelp("Prefix of every Redis key and channel, so deployments can share one Redis (default pagesync:).", valueName: "prefix"))
    var redisPrefix: String?

    @Option(name: .customLong("metrics-listen"), help: ArgumentHelp(
        "Serve GET /metrics (Prometheus text format) and GET /healthz (200 ok, or 503 and why) over HTTP on this address (default: off). It has no authentication: keep it on loopback; :PORT means 127.0.0.1:PORT.",
        valueName: "host:port"))
    var metricsListen: String?

    @Option(name: .customLong("web-listen"), help: ArgumentHelp(
        "Serve the follower page (GET / and GET /<room>) and its WebSocket (GET /ws?room=<name>, one protocol line per text message) over HTTP on this address (default: off). A browser member is a client like any other: same limits, AUTH and WHO. :PORT means 127.0.0.1:PORT.",
        valueName: "host:port"))
    var webListen: String?

    @Option(name: .customLong("web-tls-listen"), help: ArgumentHelp(
        "Serve what --web-listen serves over TLS on this address: the follower page over https:// and its WebSocket over wss://, with the certificate of --tls-cert and --tls-key (or tls: in the config), which is needed, and reloaded with it on SIGHUP (default: off). Either web listener may be given alone, or both. :PORT means 127.0.0.1:PORT.",
        valueName: "host:port"))
    var webTLSListen: String?

    @Option(name: .customLong("metrics-rooms"), help: ArgumentHelp("Rooms with series of their own in /metrics and lines in INFO rooms: the first n in configuration order (default 100).", valueName: "n"))
    var metricsRooms: Int?

    @Option(name: .customLong("reload"), help: ArgumentHelp(
        "Do not run a daemon: send SIGHUP to the running pagesyncd with this process id, which re-reads its config, TLS certificate and documents, and exit (the systemd units' ExecReload=, where /bin/kill may be missing).",
        valueName: "pid"))
    var reload: String?

    @Flag(name: .customLong("no-fsync"), help: ArgumentHelp("Deprecated alias of --durability batch.", visibility: .hidden))
    var noFsync = false

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level: \"\(logLevel)\" is not one of trace, debug, info, notice, warning, error, critical")
        }
        if let listen, ListenAddress(parsing: listen) == nil {
            throw ValidationError("--listen: \"\(listen)\" is not HOST:PORT (for example 127.0.0.1:7777 or [::1]:7777)")
        }
        if let durability, Durability(parsing: durability) == nil {
            throw ValidationError("--durability: \"\(durability)\" is not batch or always")
        }
        if let tlsListen, ListenAddress(parsing: tlsListen) == nil {
            throw ValidationError("--tls-listen: \"\(tlsListen)\" is not HOST:PORT (for example 0.0.0.0:7778)")
        }
        if let metricsListen, ListenAddress(parsing: metricsListen) == nil {
            throw ValidationError("--metrics-listen: \"\(metricsListen)\" is not HOST:PORT (for example 127.0.0.1:7779)")
        }
        if let webListen, ListenAddress(parsing: webListen) == nil {
            throw ValidationError("--web-listen: \"\(webListen)\" is not HOST:PORT (for example 127.0.0.1:8080)")
        }
        if let webTLSListen, ListenAddress(parsing: webTLSListen) == nil {
            throw ValidationError("--web-tls-listen: \"\(webTLSListen)\" is not HOST:PORT (for example 0.0.0.0:8443)")
        }
        if let tlsMinVersion, !TLSConfig.versions.contains(tlsMinVersion) {
            throw ValidationError("--tls-min-version: \"\(tlsMinVersion)\" is not 1.2 or 1.3")
        }
        if let redis, case .failure(let error) = RedisURL.parse(redis) {
            throw ValidationError("--\(error.message)")
        }
        if let split, Pagination(parsing: split) == nil {
            throw ValidationError("--split: \"\(split)\" is not markdown, headings, formfeed, separator:<line> or lines:<n>")
        }
        if token != nil && tokenFile != nil {
            throw ValidationError("give either --token or --token-file, not both")
        }
        if (split != nil || wrap || token != nil || tokenFile != nil) && files.isEmpty {
            throw ValidationError("--split, --wrap, --token and --token-file apply to FILE rooms: name at least one FILE")
        }
    }

    func run() async throws {
        if let reload {
            do {
                try ReloadSignal.send(toPID: reload)
            } catch {
                let line = Array("pagesyncd: \(error)\n".utf8)
                _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                throw ExitCode(1)
            }
            return
        }
        // No default value in the declaration: argument-parser would print it a second time.
        let level = logLevel.flatMap(Logger.Level.init(rawValue:)) ?? .info
        // One line per event on stderr; under systemd with syslog priorities for the journal.
        LoggingSystem.bootstrap { label in
            var handler = JournalAwareLogHandler.standard(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "pagesyncd")

        var overrides = CommandLineOverrides()
        overrides.files = files
        overrides.listen = listen.flatMap(ListenAddress.init(parsing:))
        overrides.stateDirectory = stateDirectory
        overrides.maxClients = maxClients
        overrides.maxLineLength = maxLine
        overrides.pagination = split.flatMap(Pagination.init(parsing:))
        overrides.wraps = wrap
        overrides.token = token
        overrides.tokenFile = tokenFile
        overrides.durability = durability.flatMap(Durability.init(parsing:)) ?? (noFsync ? .batch : nil)
        overrides.maxClientsPerAddress = maxClientsPerAddress
        overrides.idleTimeoutSeconds = idleTimeout
        overrides.whoPageSize = whoPageSize
        overrides.tlsListen = tlsListen.flatMap(ListenAddress.init(parsing:))
        overrides.tlsCertificateFile = tlsCert
        overrides.tlsKeyFile = tlsKey
        overrides.tlsCAFile = tlsCA
        overrides.tlsMinimumVersion = tlsMinVersion
        overrides.tlsHandshakeTimeoutSeconds = tlsHandshakeTimeout
        overrides.allowPlaintextAuth = allowPlaintextAuth
        overrides.redis = redis.flatMap { try? RedisURL.parse($0).get() }
        overrides.redisPrefix = redisPrefix
        overrides.metricsListen = metricsListen.flatMap(ListenAddress.init(parsing:))
        overrides.metricsRooms = metricsRooms
        overrides.webListen = webListen.flatMap(ListenAddress.init(parsing:))
        overrides.webTLSListen = webTLSListen.flatMap(ListenAddress.init(parsing:))
        let configFile = config
        let fixedOverrides = overrides
        let load: @Sendable () async throws -> ServerConfig = {
            try await ConfigLoader.load(configFile: configFile, overrides: fixedOverrides)
        }

        let serverConfig: ServerConfig
        do {
            serverConfig = try await load()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(78)  // EX_CONFIG
        }
        // systemd: sockets handed over (socket activation) and sd_notify.
        let activation = SocketActivation.take()
        if case .failure(let why) = activation { logger.warning("ignoring LISTEN_FDS: \(why)") }
        let passed = (try? activation.get()) ?? []
        let listenFDs = passed.filter { $0.name != TLSConfig.socketName && $0.name != ServerConfig.webSocketName }.map(\.fd)
        let tlsListenFDs = passed.filter { $0.name == TLSConfig.socketName }.map(\.fd)
        let webListenFDs = passed.filter { $0.name == ServerConfig.webSocketName }.map(\.fd)
        if !passed.isEmpty {
            logger.info("socket-activated: \(listenFDs.count) plaintext, \(tlsListenFDs.count) TLS and \(webListenFDs.count) web listening socket(s) from systemd")
        }
        let lifecycle = SystemdLifecycleObserver()

        // The loop runs on a thread of its own; this task just waits for it.
        let failure: StartError? = await withCheckedContinuation { (continuation: CheckedContinuation<StartError?, Never>) in
            let thread = LoopThread {
                do throws(StartError) {
                    try Daemon.run(
                        config: serverConfig, logger: logger, observer: lifecycle,
                        listenFDs: listenFDs, tlsListenFDs: tlsListenFDs, webListenFDs: webListenFDs, reloadConfig: load)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
            thread.start()
        }
        if let failure {
            logger.critical("\(failure)")
            throw ExitCode(1)
        }
    }
}

