import Logging
import PageSyncCore
import UV

extension Coordinator {
    /// Queues a reply; it leaves once the group it may reflect is settled.
    func stage(_ session: Session, _ item: OutboxItem) {
        catchUp(session)
        session.outbox.stage(item, group: stagingGroup, backedUp: session.backedUp)
        queueFlush(session)
    }

    /// Queues a reply that reports room state, rendered now from the state its command saw
    /// (``OutboxItem/state(_:fallback:)``): it leaves once that state is saved, and a later
    /// command of the same turn cannot change what it says.
    func stage(_ session: Session, reporting reply: DeferredReply) {
        stage(session, .state(render(reply, current: true), fallback: reply))
    }

    func queueFlush(_ session: Session) {
        guard !session.flushQueued else { return }
        session.flushQueued = true
        flushList.append(session)
    }

    /// The room's state changed in this turn: it joins the group now forming, and output
    /// staged from now on waits for that group.
    func markChanged(_ runtime: RoomRuntime) {
        if !runtime.changedThisTurn {
            runtime.changedThisTurn = true
            changedThisTurn.append(runtime)
        }
        stagingGroup = nextGroup
    }

    /// A room's state changed: its new state line, encoded once, joins the room's
    /// ``FanoutLog``. No member is touched now: the fan-out pass (``fanOut()``) offers the
    /// line to each member and writes it once the group is settled, or a member catches up
    /// earlier, when anything else is staged for it.
    func roomChanged(_ runtime: RoomRuntime) {
        markChanged(runtime)
        publish(runtime.pageLine(), group: stagingGroup, in: runtime)
    }

    /// Adds `line` to the room's fan-out, waiting for `group`.
    func publish(_ line: ByteLine, group: UInt64, in runtime: RoomRuntime) {
        // A room is in the fan-out list exactly while its log is not empty.
        if runtime.fanout.isEmpty { fanoutRooms.append(runtime) }
        runtime.fanout.append(line, group: group)
    }

    /// Offers `session` the lines of its room's fan-out it has not been offered yet, so a
    /// reply staged now follows them.
    func catchUp(_ session: Session) {
        guard !fanoutRooms.isEmpty else { return }
        let runtime = session.runtime
        guard !runtime.fanout.isEmpty else { return }
        offerUnseen(session, runtime, backedUp: session.backedUp)
    }

    /// Offers `session` what of `runtime`'s fan-out it has not had (the usual per-client
    /// conflation applies) and moves its cursor to the end.
    @inline(__always)
    func offerUnseen(_ session: Session, _ runtime: RoomRuntime, backedUp: Bool) {
        for (line, group) in runtime.fanout.unseen(from: session.fanoutCursor) {
            session.outbox.offer(line, group: group, backedUp: backedUp)
        }
        session.fanoutCursor = runtime.fanout.end
    }

    /// The session moved to `runtime` (a new connection, or JOIN): it has seen its fan-out so far.
    func enterFanout(_ session: Session, _ runtime: RoomRuntime) {
        session.fanoutCursor = runtime.fanout.end
    }

    /// The fan-out pass (phase 3, before other output): for every room whose changes are
    /// settled, each member in turn is offered the new lines and, when the newest state is all
    /// it waits for, written at once (one write, nothing allocated); any other member goes
    /// through the flush list. So the first follower is written before any work is done for
    /// the second. Rooms whose group is not settled yet wait for a later turn.
    func fanOut() {
        guard !fanoutRooms.isEmpty else { return }
        let settled = self.settled
        var kept = 0
        for index in fanoutRooms.indices {
            let runtime = fanoutRooms[index]
            guard runtime.fanout.isSettled(settled) else {
                fanoutRooms[kept] = runtime
                kept += 1
                continue
            }
            if runtime.fanout.lines.count == 1 {
                fanOutOneLine(runtime, settled: settled)
                runtime.fanout.reset()
                continue
            }
            for member in runtime.members.values { deliverThroughOutbox(member, runtime, settled: settled) }
            runtime.fanout.reset()
        }
        fanoutRooms.removeLast(fanoutRooms.count - kept)
    }

    /// The fan-out of a room with one new line (the usual case): the line's bytes are taken
    /// once, and a member whose outbox holds nothing (``Outbox/takesLineDirectly``) gets
    /// them written straight to its socket when the socket is idle, touching nothing else;
    /// every other member then goes the general way, through its outbox.
    ///
    /// The members are walked as they stood when the pass began (a copy of the dense array),
    /// without retaining each one. A member written directly keeps its cursor: the log is
    /// reset right after the pass, which starts a new run, so every cursor has seen
    /// everything before it.
    private func fanOutOneLine(_ runtime: RoomRuntime, settled: UInt64) {
        let log = runtime.fanout
        let members = runtime.members.elements
        var from = 0
        while let index = Self.writeDirectly(log, to: members, from: from) {
            deliverThroughOutbox(members[index], runtime, settled: settled)
            from = index + 1
        }
    }

    /// The direct half of ``fanOutOneLine(_:settled:)``: writes `log`'s one line to each
    /// member from `start` on that takes it directly, and stops at the first that does not,
    /// returning its index (nil once every member is done).
    ///
    /// It is `nonisolated` on purpose, and runs on the loop thread like its caller: the
    /// closures it hands to `withUnsafeBufferPointer` and `_withUnsafeGuaranteedRef` are then
    /// not actor-isolated, so Swift checks no executor on entering each one. Isolated, the
    /// per-member closure cost one `swift_task_isCurrentExecutor` (about 380 instructions,
    /// more than the rest of a direct write's user-space work) per member and change.
    private nonisolated static func writeDirectly(_ log: FanoutLog, to members: ContiguousArray<Session>,
                                                  from start: Int) -> Int? {
        log.lines[0].line.withUnsafeBytes { bytes in
            members.withUnsafeBufferPointer { members in
                for index in start..<members.count {
                    let written = Unmanaged.passUnretained(members[index])._withUnsafeGuaranteedRef { member in
                        guard let writer = member.writer, log.hasUnseen(from: member.fanoutCursor),
                            member.outbox.takesLineDirectly
                        else { return false }
                        return writer.writeIfIdle(bytes)
                    }
                    if !written { return index }
                }
                return nil
            }
        }
    }

    /// A member's unseen lines go into its outbox; the latest leaves at once when it is all
    /// there is to send, else the member is queued for a flush (a backed-up member is flushed
    /// when libuv says its writes drained).
    private func deliverThroughOutbox(_ member: Session, _ runtime: RoomRuntime, settled: UInt64) {
        let backedUp = member.backedUp
        offerUnseen(member, runtime, backedUp: backedUp)
        if let line = member.outbox.takeLatestAlone(settled: settled, backedUp: backedUp) {
            line.withUnsafeBytes { member.connection.write($0) }
        } else if !backedUp && !member.outbox.isEmpty {
            queueFlush(member)
        }
    }

    /// Offers every member of every room its unseen lines and empties the fan-out logs (a
    /// group failed: what it changed is undone from the outboxes next).
    func offerAllUnseen() {
        for runtime in fanoutRooms {
            for member in runtime.members.values {
                offerUnseen(member, runtime, backedUp: member.backedUp)
            }
            runtime.fanout.reset()
        }
        fanoutRooms.removeAll(keepingCapacity: true)
    }

    /// Runs once per loop iteration, right before the loop waits for I/O (Redis's
    /// beforeSleep), in fixed phases:
    /// 1. paused input resumes, within each client's budget for the turn;
    /// 2. the turn's changes go to the state engine as one group;
    /// 3. what is settled is written, one write per client: first the rooms' new states
    ///    (``fanOut()``), then every other client's output.
    /// Writing never reads input again: a client whose input waits is resumed in phase 1 of
    /// the next turn, after other clients' I/O has been polled.
    func beforeSleep() {
        resumeInput()
        submitTurn()
        fanOut()
        for session in deferredFlush { queueFlush(session) }
        deferredFlush.removeAll(keepingCapacity: true)
        flushAll()
        for session in turnUsers {
            session.commandsThisTurn = 0
            session.timeThisTurn = .zero
        }
        turnUsers.removeAll(keepingCapacity: true)
        // Input or output left over: make the next turn come without waiting for I/O.
        if !resumeList.isEmpty || !deferredFlush.isEmpty { loop.execute {} }
    }

    /// Phase 2: hands the rooms changed in this turn to the engine as one group.
    func submitTurn() {
        guard !changedThisTurn.isEmpty else { return }
        let group = nextGroup
        nextGroup += 1
        var changes: [PendingGroup.Change] = []
        var records: [SavedRoom] = []
        changes.reserveCapacity(changedThisTurn.count)
        records.reserveCapacity(changedThisTurn.count)
        for runtime in changedThisTurn {
            runtime.changedThisTurn = false
            let after = runtime.room.state
            // The state submitted before is swapped out, not copied: one copy (its strings
            // retained and released) fewer per change.
            var before = after
            swap(&before, &runtime.submitted)
            records.append(SavedRoom(room: runtime.room.name, state: after))
            changes.append(PendingGroup.Change(room: runtime, before: before, after: after))
        }
        changedThisTurn.removeAll(keepingCapacity: true)
        pendingGroups.append(PendingGroup(id: group, changes: changes))
        engine.submit(group: group, rooms: records)
    }

    /// Phase 3: writes what each client may be sent now.
    func flushAll() {
        while !flushList.isEmpty {
            swap(&flushList, &flushing)
            for session in flushing {
                session.flushQueued = false
                flush(session)
            }
            flushing.removeAll(keepingCapacity: true)
        }
    }

    private func flush(_ session: Session) {
        guard session.outbox.state != .closed else { return }
        let connection = session.connection
        var written = 0
        // The clock is a system call: it is read only once a large reply is being written
        // in pieces, and the turn's time budget counts from there.
        var watch = LazyCPUStopwatch()
        if session.outbox.isStreaming { watch.start() }
        // The coordinator's buffer of chunks, taken out while it is filled (no copy, nothing
        // allocated), and put back empty: it keeps no chunk alive between flushes.
        var chunks: [OutboxChunk] = []
        swap(&chunks, &flushChunks)
        defer { swap(&chunks, &flushChunks) }
        repeat {
            session.outbox.take(settled: settled, backedUp: session.backedUp, into: &chunks) { render($0) }
            switch chunks.count {
            case 0: break
            case 1: chunks[0].withUnsafeBytes { connection.write($0) }
            case 2: Self.writePair(chunks[0], chunks[1], to: connection)
            default: withGatheredBytes(chunks) { connection.write(gathering: $0) }
            }
            // Emptied one by one: `removeAll(keepingCapacity:)` destroys arrays of arrays
            // through the runtime's generic path, several times the cost of these releases.
            while let chunk = chunks.popLast() { written += chunk.count }
            // A large reply goes on while the socket takes it, up to the turn's budget.
        } while session.outbox.isStreaming && !session.backedUp && written < TurnBudget.bytes
            && watch.lap() < TurnBudget.time
        if session.outbox.isStreaming && !session.backedUp {
            // Budget spent: the rest goes in the next turn, after other clients' I/O.
            deferredFlush.append(session)
        }
        if !session.waitQueued && session.outbox.waits(settled: settled) {
            session.waitQueued = true
            waiting.append(session)
        }
        switch session.outbox.state {
        case .closing where session.outbox.isEmpty:
            forget(session)
            connection.shutdownAndClose()
            logger.debug("client \(session.name) disconnected")
        case .paused where !session.resumeQueued
            && session.outbox.mayResume(queued: connection.queuedOutputMemory, highWater: config.outputHighWater):
            queueResume(session)
        default:
            break
        }
    }

    /// Two chunks as one gathered write: the usual flush of a navigation (its `OK`, then the
    /// room's `PAGE`), without ``withGatheredBytes(_:groupSize:_:)``'s generic nesting, which
    /// costs as much as the write itself.
    private static func writePair(_ first: OutboxChunk, _ second: OutboxChunk, to connection: any StreamConnection) {
        first.withUnsafeBytes { first in
            second.withUnsafeBytes { second in
                var pair = (first, second)
                withUnsafePointer(to: &pair) { pair in
                    pair.withMemoryRebound(to: UnsafeRawBufferPointer.self, capacity: 2) {
                        connection.write(gathering: UnsafeBufferPointer(start: $0, count: 2))
                    }
                }
            }
        }
    }

    /// A reply that reports room state: from the rooms' state as it stands (`current`, for a
    /// reply staged now), or as last saved.
    private func render(_ reply: DeferredReply, current: Bool = false) -> [UInt8] {
        func snapshot(_ r: RoomRuntime) -> RoomSnapshot { current ? r.snapshot : r.savedSnapshot }
        switch reply {
        case .hello(let room, let control, let name):
            guard let r = rooms[room] else { return [] }
            return Wire.hello(snapshot(r), control: control, name: name)
        case .joined(let room, let control, let name):
            guard let r = rooms[room] else { return [] }
            return Wire.joined(snapshot(r), control: control, name: name)
        case .status(let room, let control, let clients):
            guard let r = rooms[room] else { return [] }
            return Wire.status(snapshot(r), control: control, clients: clients)
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
                        requiresToken: r.room.policy.requiresToken, wraps: r.room.policy.wraps)
        })
    }

    // MARK: - What the engine reports

    func engineReported(_ event: EngineEvent) {
        switch event {
        case .settled(let upTo):
            settle(upTo: upTo)
        case .failed(let after, let reason):
            fail(after: after, reason: reason)
        }
    }

    private func settle(upTo group: UInt64) {
        guard group > settled else { return }
        settled = group
        while let first = pendingGroups.first, first.id <= group {
            pendingGroups.removeFirst()
            // Borrowed through the buffer: iterating copies each change (two states' strings).
            first.changes.withUnsafeBufferPointer { changes in
                for i in changes.indices { changes[i].room.saved = changes[i].after }
            }
        }
        for session in waiting where session.waitQueued {
            session.waitQueued = false
            queueFlush(session)
        }
        waiting.removeAll(keepingCapacity: true)
    }

    /// Groups after `after` could not be saved: their rooms go back to the state before
    /// them, requesters get `ERR 507`, followers never see them. Rooms changed in the turn
    /// now forming are undone too: they were made on top of what failed.
    private func fail(after: UInt64, reason: String) {
        offerAllUnseen()
        var undone: [RoomRuntime] = []
        var reindexesUndone: [RoomRuntime] = []
        func undo(_ runtime: RoomRuntime, to before: RoomState) {
            if runtime.room.state.doc != before.doc { reindexesUndone.append(runtime) }
            runtime.room.restore(before)
            undone.append(runtime)
        }
        for group in pendingGroups.reversed() where group.id > after {
            for change in group.changes.reversed() {
                undo(change.room, to: change.before)
                change.room.submitted = change.before
            }
        }
        pendingGroups.removeAll { $0.id > after }
        for runtime in changedThisTurn {
            runtime.changedThisTurn = false
            undo(runtime, to: runtime.submitted)
        }
        changedThisTurn.removeAll()
        retryUndoneReindexes(reindexesUndone)
        stagingGroup = min(stagingGroup, after)
        let errorLine = Self.notSavedLine(reason)
        for session in sessions.values {
            if session.outbox.fail(after: after, errorLine: errorLine), undone.contains(where: { $0 === session.runtime }) {
                // Its slot held a state that is gone: it gets the room's state as it stands.
                session.outbox.offer(session.runtime.pageLine(), group: after, backedUp: session.backedUp)
            }
            queueFlush(session)
        }
        // Every session is flushed; those still waiting are listed again by their flush. No
        // settle may follow a failure for a long time (a Redis outage), so the list is emptied
        // here too: it would otherwise hold every session that disconnected meanwhile.
        for session in waiting { session.waitQueued = false }
        waiting.removeAll(keepingCapacity: true)
    }
}

/// A flush writes several chunks as one gathered write (``withGatheredBytes(_:groupSize:_:)``).
extension OutboxChunk: ContiguousBytesLender {}
