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

            Clients speak a line protocol over TCP (see PROTOCOL.md), for example:
              printf 'next\\n' | nc -q1 127.0.0.1 7777

            Signals: SIGTERM or SIGINT saves, says BYE and exits; SIGHUP reloads the \
            config and re-indexes every document without dropping clients.
            """)

    @Argument(help: "Documents to serve, one room per file (UTF-8 text).")
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("YAML config file (see Config/pagesyncd.yaml).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Address to listen on (default 127.0.0.1:7777; port 0 picks a free one).", valueName: "host:port"))
    var listen: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where the journal of every room's page and version is kept (default $STATE_DIRECTORY, else $XDG_STATE_HOME/pagesync, else ~/.local/state/pagesync).", valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("max-clients"), help: ArgumentHelp("Connections beyond this get ERR 503 (default 10000).", valueName: "n"))
    var maxClients: Int?

    @Option(name: .customLong("max-line"), help: ArgumentHelp("Longest command line in bytes (default 4096).", valueName: "bytes"))
    var maxLine: Int?

    @Option(name: .long, help: ArgumentHelp("How FILE rooms are paged: formfeed, separator:<line> or lines:<n>.", valueName: "mode"))
    var split: String?

    @Flag(name: .long, help: "FILE rooms wrap around at their ends instead of stopping.")
    var wrap = false

    @Option(name: .long, help: ArgumentHelp("FILE rooms are presenter rooms: turning pages needs AUTH <token>.", valueName: "token"))
    var token: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (default info).", valueName: "level"))
    var logLevel: String = "info"

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

    @Flag(name: .customLong("no-fsync"), help: ArgumentHelp("Deprecated alias of --durability batch.", visibility: .hidden))
    var noFsync = false

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: \"\(logLevel)\" is not one of trace, debug, info, notice, warning, error, critical")
        }
        if let listen, ListenAddress(parsing: listen) == nil {
            throw ValidationError("--listen: \"\(listen)\" is not HOST:PORT (for example 127.0.0.1:7777 or [::1]:7777)")
        }
        if let durability, Durability(parsing: durability) == nil {
            throw ValidationError("--durability: \"\(durability)\" is not batch or always")
        }
        if let redis, case .failure(let error) = RedisURL.parse(redis) {
            throw ValidationError("--\(error.message)")
        }
        if let split, Pagination(parsing: split) == nil {
            throw ValidationError("--split: \"\(split)\" is not formfeed, separator:<line> or lines:<n>")
        }
        if (split != nil || wrap || token != nil) && files.isEmpty {
            throw ValidationError("--split, --wrap and --token apply to FILE rooms: name at least one FILE")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel)!
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
        overrides.durability = durability.flatMap(Durability.init(parsing:)) ?? (noFsync ? .batch : nil)
        overrides.redis = redis.flatMap { try? RedisURL.parse($0).get() }
        overrides.redisPrefix = redisPrefix
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
        let listenFDs = ((try? activation.get()) ?? []).map(\.fd)
        if !listenFDs.isEmpty { logger.info("socket-activated: \(listenFDs.count) listening socket(s) from systemd") }
        let lifecycle = SystemdLifecycleObserver()

        // The loop runs on a thread of its own; this task just waits for it.
        let failure: StartError? = await withCheckedContinuation { (continuation: CheckedContinuation<StartError?, Never>) in
            let thread = LoopThread {
                do throws(StartError) {
                    try Daemon.run(
                        config: serverConfig, logger: logger, observer: lifecycle,
                        listenFDs: listenFDs, reloadConfig: load)
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

