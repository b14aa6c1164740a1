#if canImport(Glibc)
import Glibc
#endif
import Logging
import PageSyncCore
import UV

/// The one owner of every room's truth.
///
/// The coordinator is an actor whose executor is the libuv loop, so libuv callbacks (on the
/// loop thread) enter it synchronously, and background work (re-indexing, config reload)
/// comes back to it with an ordinary `await`. A callback it hands to an object of its own
/// that runs on the loop (a connection's reads, the state engine's events, the Redis
/// engine's decisions and remote states) is a closure formed inside it, so isolated to it,
/// and calls in directly. The rarer entries (snapshot requests, the Redis engine's page-count
/// and presence answers) go through `assumeIsolated`, which also checks at run time that they
/// come on the loop thread: that check (`swift_task_isCurrentExecutor`, about 380
/// instructions) is not paid on the per-change paths.
///
/// One change, from socket to every screen: bytes → ``Session/framer`` → line →
/// `CommandParser` → `Room.navigate` → the room's new state, and (``TurnDelivery``) a `PAGE`
/// line encoded once into the room's ``FanoutLog``, the requester's `OK` into its ``Outbox``,
/// both waiting for the turn's group → at ``beforeSleep()`` the turn's changed rooms go to the
/// ``StateEngine`` as one group → once the engine says the group is settled, the fan-out pass
/// writes the `PAGE` to each member in turn, one write each, and the outboxes release the rest.
/// The coordinator owns the handles and carries out what the delivery decides.
public actor Coordinator {
    nonisolated let loop: EventLoop
    /// The loop's executor: every job of this actor runs on the loop thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    var config: ServerConfig
    let logger: Logger
    let observer: any LifecycleObserver
    let reloadConfig: @Sendable () async throws -> ServerConfig
    /// Sockets systemd passed for plaintext (TLS's are in ``tlsSide``).
    let listenFDs: [Int32]
    /// Sockets systemd passed for the web listener (`pagesync-web`).
    let webListenFDs: [Int32]
    let engine: any StateEngine
    /// The engine, when it is the authority over room state (Redis); cast once, not per command.
    let authority: (any AuthoritativeStateEngine)?
    /// What the engine read back at start; used once, by ``addRoom(_:document:)``.
    let loaded: LoadedState

    var rooms: [String: RoomRuntime] = [:]
    var roomOrder: [String] = []
    var sessions: [Int: Session] = [:]
    var nextSessionID = 1
    var shuttingDown = false

    /// What leaves, when, and for whom: staging, groups of changes, the fan-out, flushing,
    /// pausing and resuming input (see TurnDelivery.swift, which also says why this field,
    /// and the hot fields of Session and RoomRuntime, are not checked for exclusivity at run
    /// time). The coordinator carries out what it decides (Coordinator+Output.swift).
    @exclusivity(unchecked) var delivery: TurnDelivery<Session>

    /// The counters of `INFO` and `/metrics` that the coordinator keeps (the delivery keeps its
    /// own, ``TurnDelivery/counts``; see Coordinator+Monitoring.swift). Changed only through
    /// ServerMetrics' mutating methods and fields, which call nothing back, so not checked for
    /// exclusivity at run time (as the delivery's field, for the reasons in TurnDelivery.swift).
    @exclusivity(unchecked) var metrics = ServerMetrics()
    /// Start time, the metrics listener, the last `/metrics` body.
    var monitoring = Monitoring()
    /// The `--web-listen` listener (the follower page and its WebSocket), while it runs: or
    /// the first of the `pagesync-web` sockets systemd passed, the others in ``webMoreServers``.
    var webServer: HTTPServer?
    /// The web listener on the second and later `pagesync-web` sockets (several `ListenStream=`).
    var webMoreServers: [HTTPServer] = []
    /// The `--web-tls-listen` listener (the same over TLS), while it runs.
    var webTLSServer: HTTPServer?

    /// Presence and warnings kept for an authoritative engine (see Coordinator+Redis.swift).
    let shared = AuthoritySide()

    /// Only the newest re-index of a room and the newest reload are applied.
    var reloadGeneration = 0

    var listeners: [TCPListener] = []
    /// TLS listeners, certificate and handshakes under way.
    var tlsSide: TLSSide
    /// The address the built-in guide shows: where the first listener really listens.
    var guideAddress = ServerConfig.defaultListen
    /// The hook before each wait for I/O, input polling, signals and the coordinator's timers.
    var hooks = LoopHooks()
    /// The rooms' documents watched for edits.
    var watching = DocumentWatching()
    /// AUTH rate limits, the token comparison (random key per process) and its log.
    var auth = AuthGate()
    /// `max-clients`, `max-clients-per-address` and `idle-timeout`.
    var admission = ClientAdmission()
    /// The idle sweep, running only while `idle-timeout` is on. A field of its own: every
    /// command reads it, and alone it needs no exclusivity check at run time (in
    /// ``ClientAdmission``, whose tracker is changed while a closure runs, it cost one per
    /// command).
    var idleTimer: UV.Timer?
    /// When clients that left are worth a heap trim.
    var departureTrimPolicy = DepartureTrimPolicy()

    /// Creates the coordinator on `loop`, over the state `engine` has already loaded. Call
    /// ``start()`` on the loop thread next.
    public init(
        loop: EventLoop,
        config: ServerConfig,
        logger: Logger,
        engine: any StateEngine,
        loaded: LoadedState,
        observer: any LifecycleObserver = NoLifecycleObserver(),
        listenFDs: [Int32] = [],
        tlsListenFDs: [Int32] = [],
        webListenFDs: [Int32] = [],
        tlsContext: TLSContext? = nil,
        reloadConfig: @escaping @Sendable () async throws -> ServerConfig
    ) {
        self.loop = loop
        self.tlsSide = TLSSide(listenFDs: tlsListenFDs, context: tlsContext)
        self.config = config
        self.logger = logger
        self.engine = engine
        self.authority = engine as? any AuthoritativeStateEngine
        self.loaded = loaded
        self.observer = observer
        self.listenFDs = listenFDs
        self.webListenFDs = webListenFDs
        self.reloadConfig = reloadConfig
        self.delivery = TurnDelivery(outputHighWater: config.outputHighWater)
    }

    // MARK: - Start and stop

    /// Opens the documents, restores the saved state, starts listening and
    /// installs the signal handlers. Runs on the loop thread.
    public func start() throws(StartError) {
        engine.onEvent = { [unowned self] event in self.engineReported(event) }
        engine.snapshot = { [unowned self] in
            self.assumeIsolated { me in me.roomOrder.compactMap { me.rooms[$0] }.map { SavedRoom(room: $0.room.name, state: $0.room.state) } }
        }
        startAuthority()
        let socketActivated = !listenFDs.isEmpty || !tlsSide.listenFDs.isEmpty
        do {
            if !socketActivated {
                let listener = try TCPListener(loop: loop, host: config.listen.host, port: Int(config.listen.port))
                try listener.listen { connection in self.accept(connection) }
                listeners.append(listener)
            } else {
                for fd in listenFDs {
                    let listener = try TCPListener(loop: loop, adopting: fd)
                    try listener.listen { connection in self.accept(connection) }
                    listeners.append(listener)
                }
            }
        } catch {
            throw StartError("cannot listen on \(config.listen): \(error)")
        }
        try startTLS(socketActivated: socketActivated)
        try startMonitoring()
        try startWeb()

        // Listening comes first so the built-in guide can name the address really listened on
        // (no connection is accepted before start() returns: it runs on the loop thread).
        if let bound = listeners.first?.localAddress, let port = UInt16(exactly: bound.port) {
            guideAddress = ListenAddress(host: bound.host, port: port)
        }
        for roomConfig in config.rooms {
            let document: Document
            do {
                document = try Document.open(roomConfig.document, pagination: roomConfig.pagination, notes: roomConfig.notes,
                                              guideAddress: guideAddress)
            } catch {
                throw StartError("room \(roomConfig.name): \(error)")
            }
            addRoom(roomConfig, document: document)
        }
        fitClientLimit()  // no connection is accepted before this job ends

        // Before the prepare hook: libuv runs the hook started last first, so beforeSleep's
        // flush comes before InputPolling's decision and the wait it measures starts after it.
        // In journaled modes a reply may leave later (after its write, or its sync in `always`
        // mode), and the Redis engine's replies are not counted as input: there the wait
        // includes that time, and polling turns itself off when it passes the limit.
        hooks.inputPolling = InputPolling(loop: loop)
        hooks.prepare = PrepareHook(loop: loop) { self.beforeSleep() }
        do {
            hooks.signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGINT) { self.shutdown(reason: "SIGINT") })
            hooks.signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGTERM) { self.shutdown(reason: "SIGTERM") })
            hooks.signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGHUP) { self.reload() })
        } catch {
            throw StartError("cannot install signal handlers: \(error)")
        }
        watchDocuments()
        if let interval = observer.watchdogInterval {
            // Pinged from the loop itself: a stuck loop stops the pings.
            let ms = UInt64(max(1, interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000))
            let timer = UV.Timer(loop: loop)
            let observer = self.observer
            timer.start(afterMilliseconds: ms, repeatMilliseconds: ms) { observer.watchdog() }
            hooks.watchdogTimer = timer
        }
        if let resident = ProcessMemory.residentBytes() { departureTrimPolicy.begin(resident: resident) }
        let statusTimer = UV.Timer(loop: loop)
        statusTimer.start(afterMilliseconds: 2000, repeatMilliseconds: 2000) {
            self.reportStatus()
            self.trimHeapAfterDepartures()
        }
        hooks.statusTimer = statusTimer

        for listener in listeners {
            if let address = listener.localAddress {
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                logger.info("listening on \(host):\(address.port)")
            }
        }
        for listener in tlsSide.listeners {
            if let address = listener.localAddress {
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                logger.info("listening for TLS on \(host):\(address.port)")
            }
        }
        let where_ = config.redis.map { "redis \($0), keys \(config.redisPrefix)*" } ?? "\(config.stateDirectory) (durability \(config.durability))"
        logger.info("serving \(roomOrder.count) room(s): \(roomOrder.joined(separator: ", ")); state in \(where_)")
        hooks.lastStatus = statusLine
        observer.ready(status: hooks.lastStatus)
        engine.started()
    }

    var statusLine: String {
        "\(sessions.count) client(s) in \(roomOrder.count) room(s)"
    }

    /// `STATUS=` for the service manager, sent only when it changed.
    private func reportStatus() {
        let line = statusLine
        guard line != hooks.lastStatus else { return }
        hooks.lastStatus = line
        observer.status(line)
    }

    /// Restores a room from what the engine loaded (``RoomRestore``'s rules); a state that
    /// differs from the saved one is journaled in the first group, before anyone is served.
    func addRoom(_ roomConfig: RoomConfig, document: Document) {
        let outcome = RoomRestore.restore(
            saved: loaded.rooms[roomConfig.name], pageCount: document.pageCount, doc: document.id,
            freshEpoch: .random())
        let runtime = RoomRuntime(
            room: Room(name: roomConfig.name, policy: roomConfig.policy, state: outcome.state),
            config: roomConfig, document: document)
        rooms[roomConfig.name] = runtime
        roomOrder.append(roomConfig.name)
        if outcome.needsSave { delivery.markChanged(runtime) }
        let s = outcome.state
        logger.info("room \(roomConfig.name): \(roomConfig.document), \(document.pageCount) page(s), on page \(s.page) at version \(s.version), epoch \(s.epoch)")
        if let advice = document.advice { logger.notice("room \(roomConfig.name): \(roomConfig.document): \(advice)") }
    }

    /// SIGINT/SIGTERM: stop accepting, say BYE, let every client's output settle and leave,
    /// then stop the loop.
    ///
    /// The signal watchers stay open until the loop stops, so a second SIGINT or SIGTERM (or
    /// a SIGHUP) while stopping is logged and ignored; then they close and the signals are
    /// ignored (closed, libuv would put back the default action, and a late signal would kill
    /// the daemon before it records a clean stop).
    func shutdown(reason: String) {
        guard !shuttingDown else {
            logger.notice("already stopping; \(reason) ignored")
            return
        }
        shuttingDown = true
        logger.info("shutting down (\(reason))")
        observer.stopping()
        for listener in listeners + tlsSide.listeners { listener.close() }
        listeners.removeAll()
        tlsSide.listeners.removeAll()
        stopMonitoring()
        stopWeb()
        let bye = Wire.bye("server shutting down")
        for session in sessions.values where !session.outbox.isClosingOrClosed {
            stage(session, .bytes(bye))
            closeAfterFlush(session)
        }
        watching.closeAll()
        hooks.watchdogTimer?.close()
        hooks.watchdogTimer = nil
        stopAuthority()
        hooks.statusTimer?.close()
        hooks.audienceTimer?.close()
        hooks.audienceTimer = nil
        hooks.webRateTimer?.close()
        hooks.webRateTimer = nil
        hooks.statusTimer = nil
        auth.logTimer?.close()
        auth.logTimer = nil
        idleTimer?.close()
        idleTimer = nil
        tlsSide.handshakeTimer?.close()
        tlsSide.handshakeTimer = nil
        for connection in tlsSide.refused.values { connection.close() }
        tlsSide.refused.removeAll()
        // Stop once every change is settled and every connection has flushed and closed;
        // peers that do not read would hold theirs open, so give up on them after half a second.
        let timer = UV.Timer(loop: loop)
        var ticks = 0
        timer.start(afterMilliseconds: 5, repeatMilliseconds: 5) {
            ticks += 1
            let settledAll = self.delivery.isSettled && !self.engine.isBusy
            if (self.sessions.isEmpty && settledAll) || ticks >= 100 { self.stopLoop() }
        }
        hooks.forceExitTimer = timer
    }

    private func stopLoop() {
        // From here a stop signal is ignored (not logged): the loop is done, and what is left
        // (draining disk jobs, recording a clean stop) must not be cut short by one.
        for watcher in hooks.signalWatchers { watcher.closeIgnoringLaterSignals() }
        hooks.signalWatchers.removeAll()
        hooks.forceExitTimer?.close()
        hooks.forceExitTimer = nil
        hooks.prepare?.close()
        hooks.prepare = nil
        hooks.inputPolling?.close()
        hooks.inputPolling = nil
        loop.stop()
    }
}

/// Why the daemon could not start, in one line.
public struct StartError: Error, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var description: String
    init(_ description: String) { self.description = description }
}
