import PageSyncCore

/// Phase 3 of a loop turn: what is settled is written, one write per client. (The rules, and
/// why no access here overlaps another, are in TurnDelivery.swift.)
extension TurnDelivery {
    /// Phase 3: the rooms' new states go out (``fanOut()``), then every other client's
    /// output, then each client's budget for the turn starts again. `render` renders a reply
    /// from the rooms' saved state as it leaves (``OutboxItem/deferred(_:)``); it must touch
    /// no outbox and no delivery.
    ///
    /// Returns whether work is left over for the next turn (input to resume, or a large
    /// reply to go on): the caller makes that turn come without waiting for I/O.
    package mutating func deliver(render: (DeferredReply) -> [UInt8]) -> Bool {
        fanOut()
        for member in deferredFlush { queueFlush(member) }
        deferredFlush.removeAll(keepingCapacity: true)
        flushAll(render: render)
        for member in turnUsers {
            member.commandsThisTurn = 0
            member.timeThisTurn = .zero
        }
        turnUsers.removeAll(keepingCapacity: true)
        webCommandsThisTurn = 0
        return !resumeList.isEmpty || !deferredFlush.isEmpty
    }

    /// The fan-out pass (before other output): for every room whose changes are settled,
    /// each member in turn is offered the new lines and, when the newest state is all it
    /// waits for, written at once (one write, nothing allocated); any other member goes
    /// through the flush list. So the first follower is written before any work is done for
    /// the second. Rooms whose group is not settled yet wait for a later turn.
    mutating func fanOut() {
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
            counts.deliveries &+= UInt64(runtime.fanout.lines.count * runtime.members.count)
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
    private mutating func fanOutOneLine(_ runtime: Runtime, settled: UInt64) {
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
    /// Nothing here is actor-isolated: the closures handed to `withUnsafeBufferPointer` and
    /// `_withUnsafeGuaranteedRef` check no executor on entering each one. Isolated (as this
    /// was when it was the coordinator's), the per-member closure cost one
    /// `swift_task_isCurrentExecutor` (about 380 instructions, more than the rest of a direct
    /// write's user-space work) per member and change.
    private static func writeDirectly(_ log: FanoutLog, to members: ContiguousArray<Member>, from start: Int) -> Int? {
        log.lines[0].line.withUnsafeBytes { bytes in
            members.withUnsafeBufferPointer { members in
                for index in start..<members.count {
                    let written = Unmanaged.passUnretained(members[index])._withUnsafeGuaranteedRef { member in
                        guard log.hasUnseen(from: member.fanoutCursor), member.outbox.takesLineDirectly else { return false }
                        return member.writeIfIdle(bytes)
                    }
                    if !written { return index }
                }
                return nil
            }
        }
    }

    /// A member's unseen lines go into its outbox; the latest leaves at once when it is all
    /// there is to send, else the member is queued for a flush (a backed-up member is flushed
    /// when its connection says its writes drained).
    private mutating func deliverThroughOutbox(_ member: Member, _ runtime: Runtime, settled: UInt64) {
        let backedUp = member.backedUp
        Self.offerUnseen(member, runtime, backedUp: backedUp)
        if let line = member.outbox.takeLatestAlone(settled: settled, backedUp: backedUp) {
            line.withUnsafeBytes { member.write($0) }
        } else if !backedUp && !member.outbox.isEmpty {
            queueFlush(member)
        }
    }

    /// Writes what each queued client may be sent now.
    ///
    /// The list being flushed is a local while it is walked (its buffer swapped in from
    /// `flushing` and back, so neither list is reallocated): walking a list of `self` while
    /// `flush` changes `self` retained and released every member.
    private mutating func flushAll(render: (DeferredReply) -> [UInt8]) {
        while !flushList.isEmpty {
            var batch: [Member] = []
            swap(&batch, &flushing)
            swap(&batch, &flushList)
            for member in batch {
                member.flushQueued = false
                flush(member, render: render)
            }
            batch.removeAll(keepingCapacity: true)
            swap(&batch, &flushing)
        }
    }

    private mutating func flush(_ member: Member, render: (DeferredReply) -> [UInt8]) {
        guard member.outbox.state != .closed else { return }
        var written = 0
        // The clock is a system call: it is read only once a large reply is being written
        // in pieces, and the turn's time budget counts from there.
        var watch = LazyCPUStopwatch()
        if member.outbox.isStreaming { watch.start() }
        // The buffer of chunks, taken out while it is filled (no copy, nothing allocated),
        // and put back empty: it keeps no chunk alive between flushes.
        var chunks: [OutboxChunk] = []
        swap(&chunks, &flushChunks)
        defer { swap(&chunks, &flushChunks) }
        repeat {
            member.outbox.take(settled: settled, backedUp: member.backedUp, into: &chunks, render: render)
            if !chunks.isEmpty { member.write(chunks) }
            // Emptied one by one: `removeAll(keepingCapacity:)` destroys arrays of arrays
            // through the runtime's generic path, several times the cost of these releases.
            while let chunk = chunks.popLast() { written += chunk.count }
            // A large reply goes on while the socket takes it, up to the turn's budget.
        } while member.outbox.isStreaming && !member.backedUp && written < TurnBudget.bytes
            && watch.lap() < TurnBudget.time
        if member.outbox.isStreaming && !member.backedUp {
            // Budget spent: the rest goes in the next turn, after other clients' I/O.
            deferredFlush.append(member)
        }
        if !member.waitQueued && member.outbox.waits(settled: settled) {
            member.waitQueued = true
            waiting.append(member)
        }
        switch member.outbox.state {
        case .closing where member.outbox.isEmpty:
            forget(member)
            closed.append(member)
        case .paused where !member.resumeQueued
            && member.outbox.mayResume(queued: member.queuedOutputMemory, highWater: outputHighWater):
            queueResume(member)
        default:
            break
        }
    }
}

/// What ``TurnDelivery`` counted since start, for `INFO` and `/metrics`: plain integers of the
/// loop thread, each added to where the delivery decides what it counts.
package struct DeliveryCounts: Equatable, Sendable {
    /// `PAGE` events the fan-out addressed to members: one per member and new state line.
    package var deliveries: UInt64 = 0
    /// Groups undone because they could not be saved (``TurnDelivery/fail(after:errorLine:members:)``).
    package var groupsFailed: UInt64 = 0
    /// Times a web member's input waited because the web's members had spent their rate
    /// (``TurnBudget/webCommandsPerSecond``).
    package var webRateWaits: UInt64 = 0

    /// Nothing counted.
    package init() {}
}
