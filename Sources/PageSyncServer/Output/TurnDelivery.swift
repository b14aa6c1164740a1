import PageSyncCore

/// What leaves, when, and for whom, in each loop turn: staging replies, numbering groups of
/// changes, settling or failing them, the fan-out of new room states, flushing outboxes, and
/// pausing and resuming input. The decisions of delivery, without the coordinator's I/O.
///
/// Events in, actions out, as in ``CommitPipeline``: the coordinator reports what happened (a
/// reply staged, a room changed, a turn ending, a group settled or failed, a socket drained)
/// and carries out what it is told (submit this group, stop or resume this client's reading,
/// close this client, re-index these rooms). The one exception is a write: it goes through
/// the member (``DeliveryMember``) the moment it is decided, so the first follower is written
/// before any work is done for the second. Tests drive it with clients that write into memory.
///
/// Rules:
/// - Every reply and state line waits for a *group*: the group of changes its state may
///   reflect (``stagingGroup`` when it was staged). Nothing leaves before its group is
///   settled, so no follower sees a page that is not saved, and no `OK` reports one.
/// - The changes of one loop turn form one group (``formGroup()``), numbered 1, 2, 3, ...
///   A settled group releases its own output and what waited for groups before it, in the
///   order each client's output was staged (``Outbox``).
/// - A failed group (``fail(after:errorLine:members:)``) is undone: its rooms go back to the
///   state before it, its `OK`s become the error line (`ERR 507`), its state lines are never
///   delivered, and replies that reported its state report the saved state instead.
/// - A client that does not keep up has one latest-state slot, replaced by each newer state
///   (conflation). The slot leaves after the replies staged while the client was behind: a
///   client that sends `PING` while its socket is full reads `OK PONG` before the newest
///   `PAGE`, though that state may have been reached before the `PING` was read. That order
///   is kept on purpose: the `PAGE` it then reads is the room's newest state as it leaves,
///   never older than anything a reply before it reported (a reply reports the state as its
///   command was read, and the slot is replaced by every newer one), and a reply never
///   freezes a stale `PAGE` into the queue, so however often a slow client pings it is sent
///   one `PAGE`. PROTOCOL.md ("Slow readers") says so.
///
/// Exclusivity. The coordinator keeps its delivery in one field, and it, the fields of
/// ``Session`` and ``RoomRuntime`` that the delivery reaches (`outbox`, `fanoutCursor`,
/// `flushQueued`, `waitQueued`, `resumeQueued`, `commandsThisTurn`, `timeThisTurn`;
/// `changedThisTurn`, `submitted`, `saved`, `fanout`), their other hot fields (`framer`,
/// `room`, `members`, `pageLines`) and JournalEngine's `pipeline` are marked
/// `@exclusivity(unchecked)`: Swift does not check at run time that no two accesses to one of
/// them overlap. No access can begin while another is in progress, because:
/// - they change only through this type's methods and methods of value types (Outbox,
///   LineFramer, Room, MemberSet, FanoutLog, PageLineTemplate, CommitPipeline), and every
///   engine call and engine callback runs after the access that led to it has ended
///   (``formGroup()`` returns the group, and the coordinator submits it; `perform(pipeline.x())`);
/// - while a method of this type runs, the only other code that runs is: a member's writes,
///   which never call back (a connection reports a failed write on a later loop turn);
///   `Outbox.take`'s `render`, which reads the rooms' state and `members.count`, and no
///   outbox or delivery, and is called only from a flush, outside any room change;
///   `removeAll(where:)`'s predicates, which read only the element; and
///   `PageLineTemplate.line`'s builder closures, which touch only the template's own arrays;
/// - releasing a value inside one of these accesses may free a Session (a closed session's
///   last reference is often in the list being flushed or ``turnUsers``), but neither Session nor
///   anything it holds has a deinit that reaches the coordinator, and a RoomRuntime is never
///   freed.
/// A deinit added there, a write that calls back, or a closure passed to one of these
/// mutations that reaches the coordinator, must drop the attribute from the field it touches:
/// an overlap is now undefined behaviour, not a trap, in the tests too.
/// Left checked, these fields took about 27 runtime calls and 17% of the daemon's user-space
/// instructions per change (callgrind, 20 durable clients). Whole-module optimization drops
/// the check by itself for a field whose every access it can prove alone; these fail that
/// proof mainly because appending to an array, or releasing a value, may run a deinit, and
/// a field reached through a protocol requirement's `modify` accessor (the small fields the
/// delivery reaches through ``DeliveryMember`` and ``DeliveryRoom``) fails it always: left
/// checked, those cost 10 `swift_beginAccess` per change (350 instructions) that they did not
/// cost while the coordinator touched them directly.
package struct TurnDelivery<Member: DeliveryMember> {
    package typealias Runtime = Member.Runtime

    /// A group handed to the engine and not settled yet: for each room it changed, the state
    /// before it (restored should the group fail) and after it (what the room reports as
    /// saved once the group is settled).
    struct PendingGroup {
        /// One room's change within the group.
        struct Change {
            let room: Runtime
            let before: RoomState
            let after: RoomState
        }

        /// The group's number.
        let id: UInt64
        /// The rooms it changed, in the order they first changed in its turn.
        let changes: [Change]
    }

    // Group commit.
    /// The number the group now forming will have.
    package private(set) var nextGroup: UInt64 = 1
    /// The group output staged now waits for: the latest group with a change.
    package private(set) var stagingGroup: UInt64 = 0
    /// Every group up to this one is settled.
    package private(set) var settled: UInt64 = 0
    /// Rooms changed in this turn.
    private var changedThisTurn: [Runtime] = []
    /// Groups handed to the engine and not settled, oldest first.
    private var pendingGroups: [PendingGroup] = []

    // Output and input scheduling.
    /// Clients with output to write in this turn's flush, each once (``DeliveryMember/flushQueued``).
    var flushList: [Member] = []
    /// The buffer the list being flushed is swapped with, so that neither is reallocated.
    var flushing: [Member] = []
    /// What one flush takes from an outbox, reused from flush to flush.
    var flushChunks: [OutboxChunk] = []
    /// Clients whose paused input is looked at in the next turn's first phase.
    var resumeList: [Member] = []
    /// Clients whose large reply goes on in the next turn.
    var deferredFlush: [Member] = []
    /// Clients holding output for a group that is not settled yet, each once (its
    /// ``DeliveryMember/waitQueued``). A list and a flag, not a dictionary keyed by id: in
    /// `always` mode nearly every requester is added, and no id is hashed for it. A client
    /// forgotten meanwhile stays listed, its flag cleared, until the next settle or failure
    /// empties the list (and is skipped then).
    var waiting: [Member] = []
    /// Clients that handled commands in this turn (their budgets are reset after it).
    var turnUsers: [Member] = []
    /// Commands the web's members (``DeliveryMember/sharesWebBudget``) handled in this turn,
    /// all together (``TurnBudget/webCommands``).
    var webCommandsThisTurn = 0
    /// The web's members' commands a second, all together (``TurnBudget/webCommandsPerSecond``).
    package var webRate = CommandRate(perSecond: TurnBudget.webCommandsPerSecond, burst: TurnBudget.webBurst)
    /// Web members whose input waits for ``webRate``, in the order they paused: they resume
    /// as commands are earned (``refillWebRate(now:)``), not in the next turn.
    var webWaiting: [Member] = []
    /// Rooms whose ``FanoutLog`` holds lines not every member was offered.
    var fanoutRooms: [Runtime] = []
    /// Clients whose output has all been written and that are to be closed (``takeClosed()``).
    var closed: [Member] = []
    /// What the delivery counted (`INFO`, `/metrics`): plain integers, read when asked.
    package internal(set) var counts = DeliveryCounts()

    /// Unsent output per client (staged, and queued in its connection) at which its reading
    /// pauses; it resumes below half (`output-high-water`).
    package var outputHighWater: Int

    /// A delivery with nothing staged and no group formed; reading pauses at `outputHighWater`.
    package init(outputHighWater: Int) {
        self.outputHighWater = outputHighWater
    }

    /// Whether every change made so far is settled (nothing forming, nothing pending).
    package var isSettled: Bool { pendingGroups.isEmpty && changedThisTurn.isEmpty }
    /// Groups handed to the engine and not settled yet.
    package var pendingCount: Int { pendingGroups.count }

    // MARK: - Staging

    /// Queues a reply for `member`; it leaves once the group it may reflect is settled.
    package mutating func stage(_ member: Member, _ item: OutboxItem) {
        catchUp(member)
        member.outbox.stage(item, group: stagingGroup, backedUp: member.backedUp)
        queueFlush(member)
    }

    /// `member` is to be flushed in this turn (its output may leave, or a reply was filled).
    package mutating func queueFlush(_ member: Member) {
        guard !member.flushQueued else { return }
        member.flushQueued = true
        flushList.append(member)
    }

    /// The room's state changed in this turn: it joins the group now forming, and output
    /// staged from now on waits for that group. (No state line: a room's first record.)
    package mutating func markChanged(_ runtime: Runtime) {
        if !runtime.changedThisTurn {
            runtime.changedThisTurn = true
            changedThisTurn.append(runtime)
        }
        stagingGroup = nextGroup
    }

    /// A room's state changed (a document re-indexed): it joins the group now forming, and
    /// its new state line, encoded once, joins the room's ``FanoutLog``. No member is touched
    /// now: the fan-out offers the line to each member and writes it once the group is
    /// settled, or a member catches up earlier, when anything else is staged for it.
    package mutating func roomChanged(_ runtime: Runtime) {
        markChanged(runtime)
        publish(runtime.pageLine(), group: stagingGroup, in: runtime)
    }

    /// `member` moved its room: its `OK` (`reply`) is staged, then the room's new state goes
    /// to every member, the requester too; both wait for the group the change joins.
    package mutating func moved(_ runtime: Runtime, reply: NavigatedReply, by member: Member) {
        markChanged(runtime)
        stage(member, .change(reply))
        publish(runtime.pageLine(), group: stagingGroup, in: runtime)
    }

    /// The room took a state saved elsewhere (another daemon's, through Redis): its line goes
    /// to every member in this turn's fan-out (group 0 is always settled).
    package mutating func adopted(_ runtime: Runtime) {
        publish(runtime.pageLine(), group: 0, in: runtime)
    }

    /// Adds `line` to the room's fan-out, waiting for `group`.
    private mutating func publish(_ line: ByteLine, group: UInt64, in runtime: Runtime) {
        // A room is in the fan-out list exactly while its log is not empty.
        if runtime.fanout.isEmpty { fanoutRooms.append(runtime) }
        runtime.fanout.append(line, group: group)
    }

    /// Offers `member` the lines of its room's fan-out it has not been offered yet, so a reply
    /// staged now follows them. Call before it leaves its room.
    package func catchUp(_ member: Member) {
        guard !fanoutRooms.isEmpty else { return }
        let runtime = member.runtime
        guard !runtime.fanout.isEmpty else { return }
        Self.offerUnseen(member, runtime, backedUp: member.backedUp)
    }

    /// Offers `member` what of `runtime`'s fan-out it has not had (the usual per-client
    /// conflation applies) and moves its cursor to the end.
    @inline(__always)
    static func offerUnseen(_ member: Member, _ runtime: Runtime, backedUp: Bool) {
        for (line, group) in runtime.fanout.unseen(from: member.fanoutCursor) {
            member.outbox.offer(line, group: group, backedUp: backedUp)
        }
        member.fanoutCursor = runtime.fanout.end
    }

    /// `member` is in `runtime` now (a new connection, or JOIN): it has seen its fan-out so
    /// far, and no state of a room it left waits for it.
    package func entered(_ member: Member, _ runtime: Runtime) {
        member.fanoutCursor = runtime.fanout.end
        member.outbox.dropLatest()
    }

    /// `member` is to be closed once what is staged for it has left (``takeClosed()``).
    /// The caller stops reading it.
    package mutating func close(_ member: Member) {
        catchUp(member)
        member.outbox.close(backedUp: member.backedUp)
        queueFlush(member)
    }

    /// `member` is gone: nothing more is written to it, and no list keeps it waiting.
    package func forget(_ member: Member) {
        member.outbox.state = .closed
        member.waitQueued = false
    }

    /// The closed clients whose output has all been written: the caller closes their
    /// connections, and the delivery has forgotten them.
    package mutating func takeClosed() -> [Member] {
        guard !closed.isEmpty else { return [] }
        defer { closed.removeAll() }
        return closed
    }

    // MARK: - Groups

    /// Phase 2 of a loop turn: the rooms changed in this turn become one group, which the
    /// caller hands to the engine (each room's new state, in the order they first changed);
    /// nil when nothing changed.
    package mutating func formGroup() -> (id: UInt64, rooms: [SavedRoom])? {
        guard !changedThisTurn.isEmpty else { return nil }
        let group = nextGroup
        nextGroup += 1
        var changes: [PendingGroup.Change] = []
        var records: [SavedRoom] = []
        changes.reserveCapacity(changedThisTurn.count)
        records.reserveCapacity(changedThisTurn.count)
        for runtime in changedThisTurn {
            runtime.changedThisTurn = false
            let after = runtime.state
            // The state submitted before is swapped out, not copied: one copy (its strings
            // retained and released) fewer per change.
            var before = after
            swap(&before, &runtime.submitted)
            records.append(SavedRoom(room: runtime.name, state: after))
            changes.append(PendingGroup.Change(room: runtime, before: before, after: after))
        }
        changedThisTurn.removeAll(keepingCapacity: true)
        pendingGroups.append(PendingGroup(id: group, changes: changes))
        return (group, records)
    }

    /// Every group up to `group` is saved: its rooms report their new state as saved, and
    /// the output that waited for it leaves in this turn's flush.
    package mutating func settle(upTo group: UInt64) {
        guard group > settled else { return }
        settled = group
        while let first = pendingGroups.first, first.id <= group {
            pendingGroups.removeFirst()
            // Borrowed through the buffer: iterating copies each change (two states' strings).
            first.changes.withUnsafeBufferPointer { changes in
                for i in changes.indices { changes[i].room.saved = changes[i].after }
            }
        }
        for member in waiting where member.waitQueued {
            member.waitQueued = false
            queueFlush(member)
        }
        waiting.removeAll(keepingCapacity: true)
    }

    /// Groups after `after` could not be saved: their rooms go back to the state before
    /// them, their `OK`s become `errorLine` (`ERR 507`), no member is sent their states.
    /// Rooms changed in the turn now forming are undone too: they were made on top of what
    /// failed. Every one of `members` (every client) is flushed; one whose latest-state slot
    /// held an undone state is offered its room's state as it stands.
    ///
    /// Returns the undone rooms whose state named another document (a re-index undone): the
    /// caller re-indexes them again later.
    package mutating func fail(after: UInt64, errorLine: [UInt8], members: some Sequence<Member>) -> [Runtime] {
        offerAllUnseen()
        var undone: [Runtime] = []
        var documentsUndone: [Runtime] = []
        func undo(_ runtime: Runtime, to before: RoomState) {
            if runtime.state.doc != before.doc { documentsUndone.append(runtime) }
            runtime.restore(before)
            undone.append(runtime)
        }
        for group in pendingGroups.reversed() where group.id > after {
            for change in group.changes.reversed() {
                undo(change.room, to: change.before)
                change.room.submitted = change.before
            }
        }
        counts.groupsFailed &+= UInt64(pendingGroups.count { $0.id > after })
        pendingGroups.removeAll { $0.id > after }
        for runtime in changedThisTurn {
            runtime.changedThisTurn = false
            undo(runtime, to: runtime.submitted)
        }
        changedThisTurn.removeAll()
        stagingGroup = min(stagingGroup, after)
        for member in members {
            if member.outbox.fail(after: after, errorLine: errorLine), undone.contains(where: { $0 === member.runtime }) {
                // Its slot held a state that is gone: it gets the room's state as it stands.
                member.outbox.offer(member.runtime.pageLine(), group: after, backedUp: member.backedUp)
            }
            queueFlush(member)
        }
        // Every client is flushed; those still waiting are listed again by their flush. No
        // settle may follow a failure for a long time (a Redis outage), so the list is emptied
        // here too: it would otherwise hold every client that disconnected meanwhile.
        for member in waiting { member.waitQueued = false }
        waiting.removeAll(keepingCapacity: true)
        return documentsUndone
    }

    /// Offers every member of every room its unseen lines and empties the fan-out logs (a
    /// group failed: what it changed is undone from the outboxes next).
    private mutating func offerAllUnseen() {
        for runtime in fanoutRooms {
            for member in runtime.members.values {
                Self.offerUnseen(member, runtime, backedUp: member.backedUp)
            }
            runtime.fanout.reset()
        }
        fanoutRooms.removeAll(keepingCapacity: true)
    }
}
