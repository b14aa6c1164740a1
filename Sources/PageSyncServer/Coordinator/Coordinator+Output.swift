import Logging
import PageSyncCore
import UV

extension Coordinator {
    /// Queues a reply; it leaves once the group it may reflect is settled. Every `ERR` reply
    /// staged is counted here (`INFO stats`, `/metrics`).
    func stage(_ session: Session, _ item: OutboxItem) {
        metrics.countIfError(item)
        delivery.stage(session, item)
    }

    /// Queues a reply that reports room state, rendered now from the state its command saw
    /// (``OutboxItem/state(_:fallback:)``): it leaves once that state is saved, and a later
    /// command of the same turn cannot change what it says.
    func stage(_ session: Session, reporting reply: DeferredReply) {
        stage(session, .state(render(reply, current: true), fallback: reply))
    }

    /// The session's output may leave in this turn's flush (a reply was filled in).
    func queueFlush(_ session: Session) {
        delivery.queueFlush(session)
    }

    /// A room's state changed without a requester (a re-index): it joins the turn's group,
    /// and its new state goes to every member once saved.
    func roomChanged(_ runtime: RoomRuntime) {
        delivery.roomChanged(runtime)
    }

    /// Runs once per loop iteration, right before the loop waits for I/O (Redis's
    /// beforeSleep), in fixed phases:
    /// 1. paused input resumes, within each client's budget for the turn;
    /// 2. the turn's changes go to the state engine as one group;
    /// 3. what is settled is written, one write per client: first the rooms' new states, then
    ///    every other client's output (``TurnDelivery/deliver(render:)``).
    /// Writing never reads input again: a client whose input waits is resumed in phase 1 of
    /// the next turn, after other clients' I/O has been polled.
    func beforeSleep() {
        let now = delivery.webRateNeedsRefill ? MonotonicClock.nanoseconds() : nil
        if let now { delivery.refillWebRate(now: now) }
        resumeInput()
        submitTurn()
        // The closure holds the coordinator unretained: the delivery's code, specialized for
        // it, retained and released a captured self around every outbox it took from (two
        // retains per change). The coordinator outlives the call.
        let me = Unmanaged.passUnretained(self)
        let delivered = delivery.counts.deliveries
        let again = delivery.deliver { reply in me._withUnsafeGuaranteedRef { $0.renderSaved(reply) } }
        // The fan-out time runs from a group's settling to the end of the delivery that
        // wrote its states.
        if delivery.counts.deliveries != delivered { metrics.fannedOut(now: MonotonicClock.nanoseconds()) }
        for session in delivery.takeClosed() {
            removeSession(session)
            session.connection.shutdownAndClose()
            logger.debug("client \(session.name) disconnected")
        }
        // Input or output left over: make the next turn come without waiting for I/O.
        if again { loop.execute {} }
        if let now, let wait = delivery.webRateWait(now: now) { armWebRateTimer(afterNanoseconds: wait) }
    }

    /// The shortest wait of ``armWebRateTimer(afterNanoseconds:)``.
    static let webRateTickMilliseconds: UInt64 = 4

    /// Makes a loop turn come when the web's members may send a command again (the turn's
    /// ``beforeSleep()`` resumes them), unless one is due sooner.
    private func armWebRateTimer(afterNanoseconds wait: UInt64) {
        guard !shuttingDown else { return }
        let timer = hooks.webRateTimer ?? UV.Timer(loop: loop)
        hooks.webRateTimer = timer
        guard !timer.isActive else { return }
        // Whole milliseconds (libuv's), rounded up, and at least 4: during a flood the waiting
        // members go on in 250 wake-ups a second of 4 commands each, rather than 1,000 of one;
        // each wake-up costs the loop more than a command (webflood, a TCP member's PING p99
        // during a flood: 0.96 to 1.08 times quiet with 4 ms, 0.95 to 1.12 with 1 ms).
        timer.start(afterMilliseconds: max(Self.webRateTickMilliseconds, (wait + 999_999) / 1_000_000)) {}
    }

    /// Phase 2: hands the rooms changed in this turn to the engine as one group.
    func submitTurn() {
        guard let group = delivery.formGroup() else { return }
        metrics.groupSubmitted(rooms: group.rooms.count)
        engine.submit(group: group.id, rooms: group.rooms)
    }

    /// A reply rendered from saved state as the delivery's flush takes it (``beforeSleep()``,
    /// on the loop thread). Rare (a reply whose group failed): the isolation check is paid
    /// only then.
    nonisolated func renderSaved(_ reply: DeferredReply) -> [UInt8] {
        assumeIsolated { $0.render(reply) }
    }

    /// A reply that reports room state: from the rooms' state as it stands (`current`, for a
    /// reply staged now), or as last saved.
    private func render(_ reply: DeferredReply, current: Bool = false) -> [UInt8] {
        func snapshot(_ r: RoomRuntime) -> RoomSnapshot { current ? r.snapshot : r.savedSnapshot }
        switch reply {
        case .hello(let room, let control, let name):
            guard let r = rooms[room] else { return [] }
            return Wire.hello(snapshot(r), control: control, name: name, idleSeconds: config.idleTimeoutSeconds)
        case .joined(let room, let control, let name):
            guard let r = rooms[room] else { return [] }
            return Wire.joined(snapshot(r), control: control, name: name)
        case .status(let room, let control, let clients):
            guard let r = rooms[room] else { return [] }
            return Wire.status(snapshot(r), control: control, clients: clients, audience: r.audience)
        case .navigationError(let error, let room):
            guard let r = rooms[room] else { return [] }
            return Wire.error(error, room: snapshot(r))
        case .rooms:
            return roomsReply(otherClients: [:], current: current)
        }
    }

    /// `OK ROOMS`: every room's saved state (or, `current`, its state as it stands);
    /// `clients=` adds `otherClients` (other daemons').
    func roomsReply(otherClients: [String: Int], current: Bool = false) -> [UInt8] {
        Wire.rooms(roomOrder.compactMap { rooms[$0] }.map { r in
            RoomListing(name: r.room.name, state: current ? r.room.state : r.saved,
                        clients: r.members.count + (otherClients[r.room.name] ?? 0),
                        requiresToken: r.room.policy.requiresToken, wraps: r.room.policy.wraps, title: r.document.wireTitle)
        })
    }

    // MARK: - What the engine reports

    func engineReported(_ event: EngineEvent) {
        switch event {
        case .settled(let upTo):
            if upTo > delivery.settled { metrics.settled(now: MonotonicClock.nanoseconds()) }
            delivery.settle(upTo: upTo)
        case .failed(let after, let reason):
            let documentsUndone = delivery.fail(after: after, errorLine: Self.notSavedLine(reason), members: sessions.values)
            retryUndoneReindexes(documentsUndone)
        }
    }
}
