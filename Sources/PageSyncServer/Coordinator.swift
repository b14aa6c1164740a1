#if canImport(Glibc)
import Glibc
#endif
import Logging
import PageSyncCore
import UV

/// Hooks for a service manager (systemd's sd_notify). Every method is optional
/// work: the default implementation does nothing.
public protocol LifecycleObserver: Sendable {
    /// Listening, and state restored.
    func ready(status: String)
    /// A one-line status for `systemctl status`.
    func status(_ text: String)
    /// A reload (SIGHUP) started.
    func reloading()
    /// Shutdown started.
    func stopping()
    /// The loop is alive.
    func watchdog()
    /// How often ``watchdog()`` must be called, if at all.
    var watchdogInterval: Duration? { get }
}

extension LifecycleObserver {
    public func ready(status: String) {}
    public func status(_ text: String) {}
    public func reloading() {}
    public func stopping() {}
    public func watchdog() {}
    public var watchdogInterval: Duration? { nil }
}

/// A ``LifecycleObserver`` that does nothing.
public struct NoLifecycleObserver: LifecycleObserver {
    /// Creates it.
    public init() {}
}

/// A room at run time: its state machine, its configuration, its document and
/// the sessions in it.
final class RoomRuntime {
    var room: Room
    var config: RoomConfig
    var document: Document
    var members: [Int: Session] = [:]
    /// Counts re-index requests: only the newest one's result is applied.
    var reindexGeneration = 0

    init(room: Room, config: RoomConfig, document: Document) {
        self.room = room
        self.config = config
        self.document = document
    }

    var snapshot: RoomSnapshot { RoomSnapshot(name: room.name, state: room.state, wraps: room.policy.wraps) }
}

/// The one owner of every room's truth.
///
/// The coordinator is an actor whose executor is the libuv loop, so libuv
/// callbacks (on the loop thread) enter it synchronously with
/// `assumeIsolated`, and background work (re-indexing, config reload) comes
/// back to it with an ordinary `await`.
///
/// One message, from socket to socket: bytes → ``Session/framer`` → line →
/// `CommandParser` → `Room.navigate` → new state → `Wire.event`, encoded once
/// → every member's conflating event slot → written in ``beforeSleep()``,
/// after the new state is saved.
public actor Coordinator {
    nonisolated let loop: EventLoop
    /// The loop's executor: every job of this actor runs on the loop thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    private var config: ServerConfig
    private let logger: Logger
    private let observer: any LifecycleObserver
    private let reloadConfig: @Sendable () async throws -> ServerConfig
    private let listenFDs: [Int32]
    private let tlsListenFDs: [Int32]
    private let store: StateStore

    private var rooms: [String: RoomRuntime] = [:]
    private var roomOrder: [String] = []
    private var sessions: [Int: Session] = [:]
    private var nextSessionID = 1
    private var flushList: [Session] = []
    /// The list being flushed; swapped with `flushList` so neither is reallocated.
    private var flushing: [Session] = []
    /// Clients whose next event waits because they are not reading.
    private var heldSessions: [Int: Session] = [:]
    private var heldRetryTimer: UV.Timer?
    /// Only the newest re-index of a room and the newest reload are applied.
    private var reloadGeneration = 0
    private var dirtyRooms: Set<String> = []
    private var shuttingDown = false

    private var listeners: [TCPListener] = []
    private var tlsListeners: [TCPListener] = []
    /// The certificate new TLS connections get; SIGHUP replaces it.
    private var tlsContext: TLSContext?
    private var prepare: PrepareHook?
    private var signalWatchers: [SignalWatcher] = []
    private var fileWatchers: [String: FileWatcher] = [:]
    private var reindexTimers: [String: UV.Timer] = [:]
    private var watchdogTimer: UV.Timer?
    private var statusTimer: UV.Timer?
    private var lastStatus = ""
    private var forceExitTimer: UV.Timer?

    /// Creates the coordinator on `loop`. Call ``start()`` on the loop thread next.
    public init(
        loop: EventLoop,
        config: ServerConfig,
        logger: Logger,
        observer: any LifecycleObserver = NoLifecycleObserver(),
        listenFDs: [Int32] = [],
        tlsListenFDs: [Int32] = [],
        reloadConfig: @escaping @Sendable () async throws -> ServerConfig
    ) throws(StateStoreError) {
        self.loop = loop
        self.config = config
        self.logger = logger
        self.observer = observer
        self.listenFDs = listenFDs
        self.tlsListenFDs = tlsListenFDs
        self.reloadConfig = reloadConfig
        self.store = try StateStore(directory: config.stateDirectory, fsync: config.fsync)
    }

    // MARK: - Start and stop

    /// Opens the documents, restores the saved state, starts listening and
    /// installs the signal handlers. Runs on the loop thread.
    public func start() throws(StartError) {
        for roomConfig in config.rooms {
            let document: Document
            do {
                document = try Document.open(roomConfig.document, pagination: roomConfig.pagination)
            } catch {
                throw StartError("room \(roomConfig.name): \(error)")
            }
            addRoom(roomConfig, document: document)
        }
        persistDirtyRooms()

        let socketActivated = !listenFDs.isEmpty || !tlsListenFDs.isEmpty
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

        prepare = PrepareHook(loop: loop) { self.beforeSleep() }
        do {
            signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGINT) { self.shutdown(reason: "SIGINT") })
            signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGTERM) { self.shutdown(reason: "SIGTERM") })
            signalWatchers.append(try SignalWatcher(loop: loop, signal: SIGHUP) { self.reload() })
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
            watchdogTimer = timer
        }
        let statusTimer = UV.Timer(loop: loop)
        statusTimer.start(afterMilliseconds: 2000, repeatMilliseconds: 2000) { self.reportStatus() }
        self.statusTimer = statusTimer

        for listener in listeners {
            if let address = listener.localAddress {
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                logger.info("listening on \(host):\(address.port)")
            }
        }
        for listener in tlsListeners {
            if let address = listener.localAddress {
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                logger.info("listening for TLS on \(host):\(address.port)")
            }
        }
        logger.info("serving \(roomOrder.count) room(s): \(roomOrder.joined(separator: ", ")); state in \(config.stateDirectory)")
        lastStatus = statusLine
        observer.ready(status: lastStatus)
    }

    private var statusLine: String {
        "\(sessions.count) client(s) in \(roomOrder.count) room(s)"
    }

    /// `STATUS=` for the service manager, sent only when it changed.
    private func reportStatus() {
        let line = statusLine
        guard line != lastStatus else { return }
        lastStatus = line
        observer.status(line)
    }

    private func addRoom(_ roomConfig: RoomConfig, document: Document) {
        var unreadable = false
        let restored = store.load(room: roomConfig.name) { [logger] problem in
            logger.error("\(problem)")
            unreadable = true
        }
        let page = restored.map { min($0.page.number, document.pageCount) }.flatMap(PageNumber.init) ?? .first
        var state = RoomState(
            page: page, pageCount: document.pageCount, version: restored?.version ?? 0,
            by: restored?.by, doc: document.id)
        if unreadable {
            // The old version is lost; clients may hold one. Start above any counter
            // this room could have reached: the wall clock in milliseconds.
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            state.version = UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
            dirtyRooms.insert(roomConfig.name)
            logger.warning("room \(roomConfig.name): starting at version \(state.version) so that versions keep growing")
        } else if let saved = restored, saved.doc != document.id || saved.page != page {
            // The document changed while the daemon was down: that is a change of state.
            state.version = saved.version + 1
            dirtyRooms.insert(roomConfig.name)
        }
        let runtime = RoomRuntime(
            room: Room(name: roomConfig.name, policy: roomConfig.policy, state: state),
            config: roomConfig, document: document)
        rooms[roomConfig.name] = runtime
        roomOrder.append(roomConfig.name)
        logger.info("room \(roomConfig.name): \(roomConfig.document), \(document.pageCount) page(s), on page \(state.page) at version \(state.version)")
    }

    /// SIGINT/SIGTERM: stop accepting, save, say BYE, close, and let the loop end.
    func shutdown(reason: String) {
        guard !shuttingDown else { return }
        shuttingDown = true
        logger.info("shutting down (\(reason))")
        observer.stopping()
        for listener in listeners + tlsListeners { listener.close() }
        listeners.removeAll()
        tlsListeners.removeAll()
        persistDirtyRooms()
        let bye = Wire.bye("server shutting down")
        for session in sessions.values {
            stage(session, bye)
            session.closeAfterFlush = true
            flush(session)
        }
        flushList.removeAll()
        prepare?.close()
        prepare = nil
        for watcher in signalWatchers { watcher.close() }
        signalWatchers.removeAll()
        for watcher in fileWatchers.values { watcher.close() }
        fileWatchers.removeAll()
        for timer in reindexTimers.values { timer.close() }
        reindexTimers.removeAll()
        watchdogTimer?.close()
        watchdogTimer = nil
        statusTimer?.close()
        statusTimer = nil
        heldRetryTimer?.close()
        heldRetryTimer = nil
        // Stop once every connection has flushed and closed; peers that do not
        // read would hold theirs open, so give up on them after half a second.
        let timer = UV.Timer(loop: loop)
        var ticks = 0
        timer.start(afterMilliseconds: 5, repeatMilliseconds: 5) {
            ticks += 1
            // Left open: the executor's wake-up handle and this timer.
            if self.loop.liveHandleCount <= 2 || ticks >= 100 { self.stopLoop() }
        }
        forceExitTimer = timer
    }

    private func stopLoop() {
        forceExitTimer?.close()
        forceExitTimer = nil
        loop.stop()
    }

    // MARK: - Connections

    /// Sets up TLS as configured, or fails: never serves plaintext where TLS was asked for.
    private func startTLS(socketActivated: Bool) throws(StartError) {
        guard let tls = config.tls else {
            if !tlsListenFDs.isEmpty {
                throw StartError("systemd passed a \(TLSConfig.socketName) socket but no TLS certificate and key are configured (tls.cert, tls.key)")
            }
            return
        }
        do {
            tlsContext = try Self.makeTLSContext(tls)
        } catch {
            throw StartError("TLS: \(error)")
        }
        let address = tls.listen.map(String.init(describing:)) ?? TLSConfig.socketName
        do {
            if socketActivated {
                for fd in tlsListenFDs {
                    let listener = try TCPListener(loop: loop, adopting: fd)
                    try listener.listen { tcp in self.acceptTLS(tcp) }
                    tlsListeners.append(listener)
                }
            } else if let listen = tls.listen {
                let listener = try TCPListener(loop: loop, host: listen.host, port: Int(listen.port))
                try listener.listen { tcp in self.acceptTLS(tcp) }
                tlsListeners.append(listener)
            }
        } catch {
            throw StartError("cannot listen for TLS on \(address): \(error)")
        }
        if tlsListeners.isEmpty {
            throw StartError(socketActivated
                ? "TLS is configured but systemd passed no socket named \(TLSConfig.socketName) (FileDescriptorName=)"
                : "TLS is configured but has no address: set tls.listen or --tls-listen")
        }
    }

    /// A server context for `tls` (reads the files: call at start or off the loop).
    nonisolated static func makeTLSContext(_ tls: TLSConfig) throws(TLSError) -> TLSContext {
        try TLSContext.server(
            certificateFile: tls.certificateFile, keyFile: tls.keyFile, clientCAFile: tls.clientCAFile,
            minimumVersion: TLSProtocolVersion(rawValue: tls.minimumVersion) ?? .v1_2,
            ciphers: tls.ciphers, cipherSuites: tls.cipherSuites)
    }

    private func acceptTLS(_ tcp: TCPConnection) {
        guard let context = tlsContext, !shuttingDown else {
            tcp.close()
            return
        }
        do throws(TLSError) {
            accept(try TLSConnection(tcp, loop: loop, context: context))
        } catch {
            logger.error("TLS session for \(tcp.peerDescription): \(error)")
        }
    }

    private func accept(_ connection: any StreamConnection) {
        guard !shuttingDown else {
            connection.close()
            return
        }
        if sessions.count >= config.maxClients {
            connection.write(Wire.error(ProtocolError(code: .full, message: "server full", closesConnection: true)))
            connection.shutdownAndClose()
            logger.warning("refused \(connection.peerDescription): server full (\(config.maxClients) clients)")
            return
        }
        connection.setNoDelay(true)
        connection.setKeepAlive(seconds: config.keepAliveSeconds)
        let id = nextSessionID
        nextSessionID += 1
        let runtime = rooms[roomOrder[0]]!
        let session = Session(
            id: id, name: "guest-\(id)", connection: connection, maxLineLength: config.maxLineLength,
            room: runtime.room.name, control: !runtime.room.policy.requiresToken)
        sessions[id] = session
        runtime.members[id] = session
        stage(session, Wire.hello(runtime.snapshot, control: session.control, name: session.name))
        connection.onWritesDrained = { self.writesDrained(id: id) }
        startReading(session)
        logger.debug("client \(session.name) connected from \(connection.peerDescription)")
    }

    private func startReading(_ session: Session) {
        let id = session.id
        session.connection.startReading { event in self.onRead(id: id, event) }
    }

    private func onRead(id: Int, _ event: StreamReadEvent) {
        guard let session = sessions[id] else { return }
        switch event {
        case .data(let bytes):
            session.framer.append(bytes)
            processInput(session)
        case .eof:
            // Lines already received still get their replies (`printf ... | nc -N`).
            session.inputEnded = true
            processInput(session)
        case .error(let error):
            disconnect(session, reason: "\(error)")
        }
    }

    /// Handles the complete lines a session has sent, until its output backs up.
    private func processInput(_ session: Session) {
        while !session.closed && !session.closeAfterFlush {
            if session.backlog >= config.outputHighWater {
                if !session.throttled {
                    session.throttled = true
                    session.connection.stopReading()
                }
                return
            }
            guard let frame = session.framer.next() else { break }
            switch frame {
            case .tooLong:
                stage(session, Wire.error(ProtocolError(
                    code: .tooLong, message: "line longer than \(config.maxLineLength) bytes", closesConnection: false)))
            case .line(let line):
                handle(line, from: session)
            }
        }
        if session.closeAfterFlush {
            session.connection.stopReading()
        } else if session.inputEnded && !session.throttled && !session.closed {
            session.closeAfterFlush = true
            queueFlush(session)
        }
    }

    private func writesDrained(id: Int) {
        guard let session = sessions[id], !session.closed else { return }
        if session.pendingEvent != nil || session.throttled { queueFlush(session) }
    }

    private func disconnect(_ session: Session, reason: String) {
        guard !session.closed else { return }
        session.closed = true
        sessions[session.id] = nil
        rooms[session.room]?.members[session.id] = nil
        session.connection.close()
        logger.debug("client \(session.name) disconnected: \(reason)")
    }

    // MARK: - Commands

    private func handle(_ line: [UInt8], from session: Session) {
        switch CommandParser.parse(line) {
        case .failure(let error):
            stage(session, Wire.error(error))
            if error.closesConnection {
                session.closeAfterFlush = true
                logger.info("closing \(session.connection.peerDescription): \(error.message)")
            }
        case .success(let command):
            execute(command, from: session)
        }
    }

    private func execute(_ command: Command, from session: Session) {
        guard let runtime = rooms[session.room] else { return }
        switch command {
        case .navigate(let navigation, let ifVersion):
            switch runtime.room.navigate(navigation, ifVersion: ifVersion, by: session.name, hasControl: session.control) {
            case .success(let outcome):
                stage(session, Wire.navigated(runtime.room.state))
                if outcome == .moved { roomChanged(runtime) }
            case .failure(let error):
                stage(session, Wire.error(error, room: runtime.snapshot))
            }
        case .status:
            stage(session, Wire.status(runtime.snapshot, control: session.control, clients: runtime.members.count))
        case .text(let requested):
            let page = requested ?? runtime.room.state.page
            guard page.number <= runtime.document.pageCount else {
                stage(session, Wire.error(NavigationError.noSuchPage(page), room: runtime.snapshot))
                return
            }
            do {
                let text = try runtime.document.text(of: page, limit: config.maxTextBytes)
                stage(session, Wire.text(
                    page: page, pageCount: runtime.document.pageCount, doc: runtime.document.id,
                    bytes: text.bytes, pageByteCount: text.pageByteCount, truncated: text.truncated))
            } catch {
                logger.error("TEXT \(page) of room \(runtime.room.name): \(error)")
                stage(session, Wire.error(ProtocolError(code: .internalError, message: "could not read the document", closesConnection: false)))
            }
        case .rooms:
            let lines = roomOrder.compactMap { rooms[$0] }.map { r -> Substring in
                let s = r.room.state
                return "\(r.room.name) page=\(s.page) pages=\(s.pageCount) version=\(s.version) clients=\(r.members.count) control=\(r.room.policy.requiresToken ? "token" : "open") wrap=\(r.room.policy.wraps ? "yes" : "no")"
            }
            stage(session, Wire.multiline(header: "OK ROOMS \(lines.count)", lines: lines))
        case .join(let name):
            guard let target = rooms[name] else {
                stage(session, Wire.error(ProtocolError(code: .notFound, message: "no room \"\(name)\"", closesConnection: false)))
                return
            }
            if target !== runtime {
                runtime.members[session.id] = nil
                target.members[session.id] = session
                session.room = name
                session.control = !target.room.policy.requiresToken
                session.pendingEvent = nil
            }
            stage(session, Wire.joined(target.snapshot, control: session.control, name: session.name))
        case .name(let name) where name == "-":
            stage(session, Wire.error(.malformed("\"-\" means nobody on the wire; pick another name")))
        case .name(let name):
            session.name = name
            stage(session, Wire.ok("NAME \(name)"))
        case .who:
            let lines = runtime.members.values.sorted { $0.id < $1.id }.map { m -> Substring in
                "\(m.name) control=\(m.control ? "yes" : "no") you=\(m === session ? "yes" : "no")"
            }
            stage(session, Wire.multiline(header: "OK WHO \(lines.count)", lines: lines))
        case .auth(let token):
            guard AuthTransportPolicy.allowsAuth(encrypted: session.connection.isEncrypted,
                                                 loopback: session.connection.peerIsLoopback,
                                                 plaintextAuthAllowed: config.plaintextAuth)
            else {
                stage(session, Wire.error(ProtocolError(code: .forbidden, message: AuthTransportPolicy.refusal, closesConnection: false)))
                return
            }
            if let expected = runtime.config.token, !constantTimeEquals(Array(expected.utf8), Array(token.utf8)) {
                logger.notice("wrong token for room \(runtime.room.name) from \(session.connection.peerDescription)")
                stage(session, Wire.error(ProtocolError(code: .forbidden, message: "wrong token", closesConnection: false)))
            } else {
                session.control = true
                stage(session, Wire.ok("AUTH control=yes"))
            }
        case .ping(let text):
            stage(session, Wire.ok(text.map { "PONG \($0)" } ?? "PONG"))
        case .help:
            stage(session, Wire.multiline(header: "OK HELP", lines: Wire.helpLines.map { Substring($0) }))
        case .quit:
            stage(session, Wire.ok("BYE"))
            session.closeAfterFlush = true
        }
    }

    // MARK: - Output

    /// Queues a reply; it is written before the loop next waits for I/O.
    ///
    /// An event already owed to a client that keeps up goes first, so what a
    /// client reads follows the order things happened. Only for a client whose
    /// output is backed up does the event wait in its slot, to be replaced by
    /// newer ones.
    private func stage(_ session: Session, _ bytes: [UInt8]) {
        if let event = session.pendingEvent, session.connection.writeQueueSize == 0 {
            session.replies += event.bytes
            session.pendingEvent = nil
        }
        session.replies += bytes
        queueFlush(session)
    }

    private func queueFlush(_ session: Session) {
        guard !session.flushQueued else { return }
        session.flushQueued = true
        flushList.append(session)
    }

    /// A room's state changed: save it before the next write, and give every
    /// member the new state line (encoded once, replacing any unsent one).
    private func roomChanged(_ runtime: RoomRuntime) {
        dirtyRooms.insert(runtime.room.name)
        let line = SharedLine(Wire.event(runtime.snapshot))
        for member in runtime.members.values {
            // A client that keeps up gets every change, even several in one loop
            // turn; only a backed-up one (or a burst past the bound) is conflated.
            if let older = member.pendingEvent, member.connection.writeQueueSize == 0,
                member.replies.count < Self.burstBound,
                member.connection.kernelUnsentBytes <= Self.conflationThreshold
            {
                member.replies += older.bytes
            }
            member.pendingEvent = line
            queueFlush(member)
        }
    }

    /// Runs once per loop iteration, right before the loop waits for I/O
    /// (Redis's beforeSleep): first save changed rooms, then write what each
    /// client is owed. So no `OK` or `PAGE` leaves before its state is on disk.
    ///
    /// Flushing can resume a throttled client, whose buffered commands stage
    /// more output (and may change a room): so it goes round until nothing is
    /// left, saving before every pass, and never sleeps with output owed.
    func beforeSleep() {
        for _ in 0..<64 {
            if !dirtyRooms.isEmpty { persistDirtyRooms() }
            guard !flushList.isEmpty else { return }
            swap(&flushList, &flushing)
            for session in flushing {
                session.flushQueued = false
                flush(session)
            }
            flushing.removeAll(keepingCapacity: true)
        }
        // Still owed after many passes: come back on the next loop turn rather than starve I/O.
        if !flushList.isEmpty { loop.execute {} }
    }

    private func flush(_ session: Session) {
        guard !session.closed else { return }
        // Nothing leaves before the state it reports is saved.
        if !dirtyRooms.isEmpty { persistDirtyRooms() }
        let connection = session.connection
        // The event waits while older output is still queued, in libuv or in the
        // kernel: it will be replaced by newer ones and written once the client
        // catches up. A closing client gets nothing after its last reply.
        var event: SharedLine?
        if let pending = session.pendingEvent, !session.closeAfterFlush, connection.writeQueueSize == 0 {
            if connection.kernelUnsentBytes <= Self.conflationThreshold {
                event = pending
                session.pendingEvent = nil
            } else {
                holdEvent(session)
            }
        }
        if !session.replies.isEmpty {
            if let event {
                connection.write([session.replies, event.bytes])
            } else {
                connection.write(session.replies)
            }
            session.replies = []
        } else if let event {
            connection.write(event.bytes)
        }
        if session.closeAfterFlush {
            session.closed = true
            sessions[session.id] = nil
            rooms[session.room]?.members[session.id] = nil
            connection.shutdownAndClose()
            logger.debug("client \(session.name) disconnected")
        } else if session.throttled && session.backlog < config.outputHighWater / 2 {
            session.throttled = false
            processInput(session)
            if !session.throttled && !session.closed && !session.closeAfterFlush && !session.inputEnded { startReading(session) }
        }
    }

    /// Unread bytes in the kernel above which a client counts as not reading, and
    /// its next event waits in its slot (so it never gets a backlog of stale pages).
    static let conflationThreshold = 2048

    /// Staged bytes per client and loop turn beyond which events of one burst are
    /// merged (about 45 events): bounds memory when one turn changes a room often.
    static let burstBound = 4096

    /// A client whose kernel buffer is full gives no signal when it drains (libuv's
    /// own queue is empty), so held events are retried every 50 ms while any wait.
    private func holdEvent(_ session: Session) {
        heldSessions[session.id] = session
        guard heldRetryTimer == nil else { return }
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: 50, repeatMilliseconds: 50) { self.retryHeldEvents() }
        heldRetryTimer = timer
    }

    private func retryHeldEvents() {
        let held = heldSessions
        heldSessions.removeAll(keepingCapacity: true)
        for session in held.values where !session.closed && session.pendingEvent != nil {
            queueFlush(session)
        }
        if heldSessions.isEmpty && flushList.isEmpty {
            heldRetryTimer?.close()
            heldRetryTimer = nil
        }
    }

    private func persistDirtyRooms() {
        for name in dirtyRooms {
            guard let runtime = rooms[name] else { continue }
            let s = runtime.room.state
            do {
                try store.save(PersistedRoom(page: s.page, version: s.version, by: s.by, doc: s.doc), room: name)
            } catch {
                logger.error("could not save room \(name): \(error); serving it from memory")
            }
        }
        dirtyRooms.removeAll()
    }

    // MARK: - Documents and reload

    private func watchDocuments() {
        var directories: [String: [String]] = [:]
        for runtime in rooms.values {
            guard case .file(let path) = runtime.config.document else { continue }
            let (directory, _) = Self.split(path)
            directories[directory, default: []].append(runtime.room.name)
        }
        for directory in directories.keys where fileWatchers[directory] == nil {
            do {
                fileWatchers[directory] = try FileWatcher(loop: loop, path: directory) { filename in
                    self.fileChanged(directory: directory, filename: filename)
                }
            } catch {
                logger.warning("cannot watch \(directory) for changes (\(error)); send SIGHUP after editing documents")
            }
        }
    }

    private static func split(_ path: String) -> (directory: String, file: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private func fileChanged(directory: String, filename: String?) {
        for runtime in rooms.values {
            guard case .file(let path) = runtime.config.document else { continue }
            let (dir, file) = Self.split(path)
            guard dir == directory, filename == nil || filename == file else { continue }
            scheduleReindex(runtime.room.name)
        }
    }

    /// Editors write in bursts: wait 100 ms of quiet before re-indexing.
    private func scheduleReindex(_ name: String) {
        let timer = reindexTimers[name] ?? {
            let timer = UV.Timer(loop: loop)
            reindexTimers[name] = timer
            return timer
        }()
        timer.stop()
        timer.start(afterMilliseconds: 100) { self.reindex(name) }
    }

    /// Re-indexes a room's document off the loop, then applies the result here.
    private func reindex(_ name: String) {
        guard let runtime = rooms[name] else { return }
        let roomConfig = runtime.config
        runtime.reindexGeneration += 1
        let generation = runtime.reindexGeneration
        Task.detached { [self] in
            do throws(DocumentError) {
                let document = try Document.open(roomConfig.document, pagination: roomConfig.pagination)
                await self.documentLoaded(document, for: roomConfig, generation: generation)
            } catch {
                await self.documentFailed(room: roomConfig.name, error: error)
            }
        }
    }

    private func documentLoaded(_ document: Document, for roomConfig: RoomConfig, generation: Int) {
        guard let runtime = rooms[roomConfig.name], runtime.config == roomConfig, !shuttingDown,
            generation == runtime.reindexGeneration  // a newer scan is under way: it wins
        else { return }
        guard document.id != runtime.document.id else { return }
        runtime.document = document
        if runtime.room.documentChanged(pageCount: document.pageCount, doc: document.id) {
            roomChanged(runtime)
        }
        logger.info("room \(roomConfig.name): re-indexed, \(document.pageCount) page(s), on page \(runtime.room.state.page)")
    }

    private func documentFailed(room: String, error: DocumentError) {
        logger.error("room \(room): cannot re-index: \(error); keeping the previous version")
    }

    /// SIGHUP: reload the configuration and re-index every document, keeping clients.
    func reload() {
        guard !shuttingDown else { return }
        logger.info("reloading (SIGHUP)")
        observer.reloading()
        let load = reloadConfig
        reloadGeneration += 1
        let generation = reloadGeneration
        Task.detached { [self] in
            do {
                let fresh = try await load()
                // The certificate and key are read here, off the loop.
                let tls: Result<TLSContext, TLSError>? = fresh.tls.map { tls in
                    Result { () throws(TLSError) in try Coordinator.makeTLSContext(tls) }
                }
                await self.applyReload(fresh, tls: tls, generation: generation)
            } catch {
                await self.reloadFailed("\(error)")
            }
        }
    }

    private func reloadFailed(_ message: String) {
        logger.error("reload: \(message); keeping the running configuration")
        for name in roomOrder { reindex(name) }
        observer.ready(status: statusLine)
    }

    private func applyReload(_ fresh: ServerConfig, tls: Result<TLSContext, TLSError>?, generation: Int) {
        // A later SIGHUP read the files again: its result is the one to apply.
        guard !shuttingDown, generation == reloadGeneration else { return }
        let keptTLS = reloadTLS(fresh.tls, context: tls)
        if fresh.listen != config.listen && listenFDs.isEmpty {
            logger.warning("reload: listen address changes need a restart; still on \(config.listen)")
        }
        if fresh.stateDirectory != config.stateDirectory {
            logger.warning("reload: state-dir changes need a restart; still \(config.stateDirectory)")
        }
        var kept = fresh
        kept.listen = config.listen
        kept.stateDirectory = config.stateDirectory
        kept.fsync = config.fsync
        kept.tls = keptTLS
        for roomConfig in fresh.rooms {
            if let runtime = rooms[roomConfig.name] {
                if runtime.config.token != roomConfig.token {
                    for member in runtime.members.values { member.control = roomConfig.token == nil }
                }
                runtime.config = roomConfig
                runtime.room.policy = roomConfig.policy
            } else {
                do {
                    addRoom(roomConfig, document: try Document.open(roomConfig.document, pagination: roomConfig.pagination))
                } catch {
                    logger.error("reload: room \(roomConfig.name): \(error); not added")
                }
            }
        }
        let removed = roomOrder.filter { name in !fresh.rooms.contains { $0.name == name } }
        if !removed.isEmpty {
            logger.warning("reload: rooms no longer configured stay open until restart: \(removed.joined(separator: ", "))")
        }
        // Keep the default room first, as configured.
        roomOrder = fresh.rooms.map(\.name).filter { rooms[$0] != nil } + removed
        kept.rooms = roomOrder.compactMap { rooms[$0]?.config }
        config = kept
        for name in roomOrder { reindex(name) }
        watchDocuments()
        logger.info("reloaded: \(roomOrder.count) room(s)")
        observer.ready(status: statusLine)
    }
}

extension Coordinator {
    /// SIGHUP for TLS: new connections get the new certificate, existing ones keep theirs; a
    /// certificate that does not load leaves the old one in place. Returns the TLS settings now
    /// in force.
    fileprivate func reloadTLS(_ fresh: TLSConfig?, context: Result<TLSContext, TLSError>?) -> TLSConfig? {
        guard let current = config.tls, !tlsListeners.isEmpty else {
            if fresh != nil { logger.warning("reload: turning TLS on needs a restart") }
            return config.tls
        }
        guard var fresh, let context else {
            logger.warning("reload: TLS cannot be turned off by a reload; still serving TLS with the previous certificate")
            return current
        }
        if fresh.listen != current.listen && tlsListenFDs.isEmpty {
            logger.warning("reload: TLS listen address changes need a restart; still on \(current.listen.map(String.init(describing:)) ?? "-")")
        }
        fresh.listen = current.listen
        switch context {
        case .success(let context):
            tlsContext = context
            logger.info("reload: TLS certificate \(fresh.certificateFile) loaded; new connections use it")
            return fresh
        case .failure(let error):
            logger.error("reload: TLS: \(error); keeping the previous certificate")
            return current
        }
    }
}

/// Why the daemon could not start, in one line.
public struct StartError: Error, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var description: String
    init(_ description: String) { self.description = description }
}
