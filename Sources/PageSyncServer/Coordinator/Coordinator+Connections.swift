import Glibc
import Logging
import PageSyncCore
import UV

extension Coordinator {
    /// Unsent bytes the kernel may hold per client (`TCP_NOTSENT_LOWAT`); past them output
    /// queues in libuv, which is how a client that stopped reading is recognized.
    static let notSentLowWatermark = 4096

    /// Sets ``ClientAdmission/clientLimit`` from `max-clients` and the open-file limit now (at start and after
    /// each reload), with one warning line when the limit cannot hold them. (`rlim_t.max` is
    /// `RLIM_INFINITY`.)
    func fitClientLimit() {
        var limit = rlimit()
        let openFiles = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
            ? Int(clamping: limit.rlim_cur) : nil
        // The metrics listener and its connections (at most HTTPLimits.maxConnections) take
        // descriptors too.
        let metrics = config.metricsListen == nil ? 0 : 1 + HTTPLimits().maxConnections
        // So do the web listeners and the page requests they serve (their WebSockets are clients).
        let web = [config.webListen, config.webTLSListen].compactMap { $0 }.count * (1 + HTTPLimits().maxConnections)
        let fit = OpenFileBudget.fit(maxClients: config.maxClients, openFileLimit: openFiles, rooms: rooms.count, extra: metrics + web)
        if let warning = fit.warning { logger.warning("\(warning)") }
        admission.clientLimit = fit.maxClients
    }

    /// Admits a new client into the default room, or into `room` (a WebSocket's `?room=`; one
    /// that does not exist gets `ERR 404`, then the connection closes).
    func accept(_ connection: any StreamConnection, room: String? = nil) {
        guard !shuttingDown else {
            connection.close()
            return
        }
        if let room, rooms[room] == nil {
            connection.write(Wire.error(ProtocolError(code: .notFound, message: "no room \"\(room.prefix(Names.maxLength + 1))\"", closesConnection: true)))
            connection.shutdownAndClose()
            return
        }
        if sessions.count >= admission.clientLimit {
            metrics.refusedFull &+= 1
            connection.write(Wire.error(ProtocolError(code: .full, message: "server full", closesConnection: true)))
            connection.shutdownAndClose()
            logger.warning("refused \(connection.peerDescription): server full (\(admission.clientLimit) clients)")
            return
        }
        // One address may not take every slot; connections that never finish a line count too.
        admission.addresses.limit = config.maxClientsPerAddress
        let address = PeerAddress.host(ofPeer: connection.peerDescription)
        guard admission.addresses.admit(address: address, connection: nextSessionID, isOpen: { sessions[$0] != nil }) else {
            metrics.refusedPerAddress &+= 1
            connection.write(Wire.error(ProtocolError(
                code: .full, message: "too many connections from your address (\(config.maxClientsPerAddress))", closesConnection: true)))
            connection.shutdownAndClose()
            logger.debug("refused \(connection.peerDescription): \(config.maxClientsPerAddress) connections from \(address) already")
            return
        }
        connection.setNoDelay(true)
        connection.setKeepAlive(seconds: config.keepAliveSeconds)
        connection.setNotSentLowWatermark(Self.notSentLowWatermark)
        let id = nextSessionID
        nextSessionID += 1
        let runtime = rooms[room ?? roomOrder[0]]!
        let session = Session(
            id: id, name: "guest-\(id)", connection: connection, maxLineLength: config.maxLineLength,
            runtime: runtime, control: !runtime.room.policy.requiresToken)
        sessions[id] = session
        if connection.isEncrypted { metrics.connectionsTLS &+= 1 } else { metrics.connectionsTCP &+= 1 }
        departureTrimPolicy.clientConnected(clients: sessions.count)
        runtime.admit(session)
        delivery.entered(session, runtime)
        stage(session, reporting: .hello(room: runtime.room.name, control: session.control, name: session.name))
        audienceChanged(runtime)
        connection.onWritesDrained = { self.writesDrained(id: id) }
        trackIdle(id)
        startReading(session)
        logger.debug("client \(session.name) connected from \(connection.peerDescription)")
    }

    func startReading(_ session: Session) {
        let id = session.id
        session.connection.startReading { event in self.onRead(id: id, event) }
    }

    private func onRead(id: Int, _ event: StreamReadEvent) {
        guard let session = sessions[id] else { return }
        switch event {
        case .data(let bytes):
            // TLS and the like, in the first byte a connection sends: one line saying what this
            // port is, then close. Later bytes are lines like any other.
            if let error = session.crossProtocolGuard.inspect(bytes) {
                stage(session, .bytes(Wire.error(error)))
                closeAfterFlush(session)
                logger.info("closing \(session.connection.peerDescription): \(error.message)")
                return
            }
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

    /// Handles the complete lines a session has sent, until its output backs up or its
    /// budget for this loop turn is spent; then its input waits (reading stops).
    func processInput(_ session: Session) {
        guard session.outbox.state == .open else { return }
        let usedBefore = session.timeThisTurn
        var used = usedBefore
        // The CPU clock is a system call (about 1 µs, against a few µs for a whole command), so it
        // is first read when a second command comes in this call: the common turn of one command
        // reads no clock, and the first command of a call goes uncharged (the command count of
        // TurnBudget still bounds a client that sends one command per read).
        var watch = LazyCPUStopwatch()
        var handledHere = 0
        defer { session.timeThisTurn = usedBefore + watch.elapsed() }
        while session.outbox.state == .open {
            // The clock is a system call: read it every 4 commands (a command costs microseconds).
            if session.commandsThisTurn % 4 == 0 && session.commandsThisTurn > 0 {
                used = usedBefore + watch.elapsed()
            }
            guard delivery.mayHandleCommand(session, used: used) else {
                // Paused: it reads again once its output drains, or in the next turn.
                session.connection.stopReading()
                return
            }
            guard let frame = session.framer.next() else { break }
            if handledHere == 1 { watch.start() }
            handledHere += 1
            delivery.commandStarted(session)
            switch frame {
            case .tooLong:
                // The session's own limit: a reload changes max-line for new connections only.
                stage(session, .bytes(Wire.error(.lineTooLong(maxLineLength: session.framer.maxLineLength))))
            case .line(let line):
                handle(line, from: session)
            }
        }
        if session.outbox.state == .open && session.inputEnded {
            closeAfterFlush(session)
        }
    }

    /// Phase 1 of a loop turn: paused clients whose output has drained read on, within budget.
    func resumeInput() {
        for session in delivery.takeResumable() {
            processInput(session)
            if session.outbox.state == .open && !session.inputEnded { startReading(session) }
        }
    }

    func writesDrained(id: Int) {
        guard let session = sessions[id] else { return }
        delivery.writesDrained(session)
    }

    /// Writes what is staged (once it is settled), then closes.
    func closeAfterFlush(_ session: Session) {
        guard session.outbox.state != .closed else { return }
        delivery.close(session)
        session.connection.stopReading()
    }

    func disconnect(_ session: Session, reason: String) {
        guard session.outbox.state != .closed else { return }
        forget(session)
        session.connection.close()
        logger.debug("client \(session.name) disconnected: \(reason)")
    }

    /// Removes a session from every list that could reach it again.
    func forget(_ session: Session) {
        delivery.forget(session)
        removeSession(session)
    }

    /// Removes a session the delivery has forgotten from the coordinator's lists; what its
    /// connection counted joins the totals of closed connections.
    func removeSession(_ session: Session) {
        metrics.connectionClosed(session.connection, outbox: session.outbox)
        sessions[session.id] = nil
        session.runtime.release(session)
        audienceChanged(session.runtime)
        // Its count of wrong tokens: ids are never reused, so a closed connection's entry would
        // only take memory, for good (about 100 bytes per guessing connection).
        auth.limiter.connectionClosed(session.id)
        // Ids are never reused either: a closed connection would otherwise stay in each sweep's
        // walk until that sweep noticed it was closed.
        admission.idle.remove(session.id)
        tlsSide.handshakes.remove(session.id)
    }

    // MARK: - Idle connections

    /// Starts watching a new connection when `idle-timeout` is on (the sweep timer runs
    /// only then), and adopts a changed timeout after a reload.
    func trackIdle(_ id: Int) {
        guard config.idleTimeoutSeconds > 0, !shuttingDown else { return }
        admission.idle.active(id, now: MonotonicClock.milliseconds())
        startIdleSweep()
    }

    /// After a reload: with `idle-timeout` on, every open connection is watched; one opened
    /// while it was off is idle from now (a silent or slowloris connection is what the
    /// operator turned it on against).
    func trackIdleAfterReload() {
        guard config.idleTimeoutSeconds > 0, !shuttingDown else { return }
        admission.idle.adopt(sessions.keys, now: MonotonicClock.milliseconds())
        startIdleSweep()
    }

    private func startIdleSweep() {
        admission.idle.timeoutMilliseconds = UInt64(config.idleTimeoutSeconds) * 1000
        guard idleTimer == nil else { return }
        let period = min(1000, max(100, UInt64(config.idleTimeoutSeconds) * 250))
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: period, repeatMilliseconds: period) { self.closeIdleConnections() }
        idleTimer = timer
    }

    /// Says `BYE idle for <n> s` to every connection that sent no complete line for
    /// `idle-timeout` seconds, and closes it.
    private func closeIdleConnections() {
        guard config.idleTimeoutSeconds > 0, !shuttingDown else {
            idleTimer?.close()
            idleTimer = nil
            admission.idle = IdleTracker(timeoutMilliseconds: 1)
            return
        }
        admission.idle.timeoutMilliseconds = UInt64(config.idleTimeoutSeconds) * 1000
        let due = admission.idle.expire(now: MonotonicClock.milliseconds()) { sessions[$0] != nil }
        for id in due {
            guard let session = sessions[id], !session.outbox.isClosingOrClosed else { continue }
            metrics.closedIdle &+= 1
            stage(session, .bytes(Wire.bye("idle for \(config.idleTimeoutSeconds) s")))
            closeAfterFlush(session)
            logger.debug("client \(session.name): idle for \(config.idleTimeoutSeconds) s, closing")
        }
    }
}
