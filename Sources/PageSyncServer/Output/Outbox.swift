import PageSyncCore

/// A reply another process decides (the Redis engine): staged in order, filled in when the
/// answer comes. Nothing staged after it leaves before it is filled.
package final class PendingReply: @unchecked Sendable {  // loop thread only
    /// The reply, once known.
    package var bytes: [UInt8]?
    package init() {}
}

/// A reply that reports room state, as a request to render it. It is staged rendered from
/// the state at the moment of its command (``OutboxItem/state(_:fallback:)``), which leaves
/// once saved; if that state's group fails, it is rendered again when it leaves, from the
/// room's saved state, so a client is never told of a state that was not saved.
package enum DeferredReply: Equatable {
    case hello(room: String, control: Bool, name: String)
    case joined(room: String, control: Bool, name: String)
    case status(room: String, control: Bool, clients: Int)
    case navigationError(NavigationError, room: String)
    case rooms
}

/// One piece of what a flush writes: a reply's bytes, or a line shared with other clients.
package enum OutboxChunk {
    case bytes([UInt8])
    case line(ByteLine)
    /// A navigation's `OK`, written out as it leaves.
    case navigated(NavigatedReply)

    /// The number of bytes.
    package var count: Int {
        switch self {
        case .bytes(let b): b.count
        case .line(let line): line.count
        case .navigated(let reply): reply.count
        }
    }

    /// Calls `body` with the bytes, valid until it returns.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self {
        case .bytes(let b): try b.withUnsafeBytes(body)
        case .line(let line): try line.withUnsafeBytes(body)
        case .navigated(let reply): try reply.withUnsafeBytes(body)
        }
    }

    /// A copy of the bytes.
    package var bytes: [UInt8] {
        switch self {
        case .bytes(let b): b
        case .line(let line): line.bytes
        case .navigated(let reply): reply.bytes
        }
    }
}

/// One piece of a client's pending output.
///
/// Every payload is one reference wide (the larger ones are `indirect`), so taking an item
/// out of the queue costs a retain, not the runtime's generic copy of a multi-field enum
/// (which cost more than the rest of a flush).
package enum OutboxItem {
    /// A reply that reports no room state (PONG, TEXT, WHO, most errors).
    case bytes([UInt8])
    /// The `OK` for a change: becomes `ERR 507` if the change could not be saved. Numbers,
    /// not bytes, so that the reply of every change allocates nothing.
    case change(NavigatedReply)
    /// A room's state line, kept for a client that keeps up: encoded once, and the same line
    /// (shared, not copied) for every client it goes to.
    case event(ByteLine)
    /// A reply reporting the room state of its command's moment, rendered when staged; it
    /// waits for the group of that state like any item. Should the group fail, it becomes
    /// `.deferred(fallback)`.
    indirect case state([UInt8], fallback: DeferredReply)
    /// A reply rendered from saved state when it leaves.
    indirect case deferred(DeferredReply)
    /// A page's text, encoded a chunk at a time as the client takes it.
    indirect case text(TextReplyEncoder, size: Int)
    /// A reply decided elsewhere; it blocks what follows until filled.
    case pending(PendingReply)

    package var byteCount: Int {
        switch self {
        case .bytes(let b), .state(let b, _): b.count
        case .change(let reply): reply.count
        case .event(let line): line.count
        case .deferred, .pending: 128
        case .text(_, let size): size
        }
    }
}

/// One client's pending output and its backpressure state, as a plain value: every rule
/// about what a client is sent, and when, lives here.
///
/// - Each item waits for a *group*: the journal group whose changes it may reflect. It
///   leaves once that group is settled, so no `OK` or `PAGE` leaves before its change is
///   saved. Items leave in the order they were staged.
/// - The *latest-state slot* holds at most one `PAGE` line. A client that keeps up (nothing
///   queued in libuv, and less than ``burstBound`` staged) gets every change: an older slot
///   event moves into the items. A backed-up client's slot is replaced by each newer event
///   (conflation), so it costs one line however many changes it misses, and reads the latest
///   state, never a backlog of stale pages, once it reads again.
/// - Reading stops when unsent output reaches the high-water mark, and resumes below half.
package struct Outbox {
    /// An empty outbox of an open connection.
    package init() {}

    /// Where the client's connection is in its life.
    package enum State: Equatable {
        /// Commands are read and answered.
        case open
        /// Reading is paused: output is backed up, or the turn's budget is spent.
        case paused
        /// The peer half-closed: answer what it sent, then close.
        case draining
        /// QUIT, a protocol violation or shutdown: write what is staged, then close.
        case closing
        /// Closed; nothing more is done.
        case closed
    }

    /// Staged bytes per client beyond which events of one burst are merged (about 45 events):
    /// bounds memory when one turn changes a room often.
    package static let burstBound = 4096

    /// The size of the pieces a large reply is encoded and written in.
    package static let streamChunk = 64 << 10

    /// Replies another process decides (``OutboxItem/pending(_:)``: the Redis engine's) that
    /// one client may wait for at once. Past them its input waits: the engine's connection is
    /// shared, and a client piping thousands of `ROOMS` without reading put each one ahead of
    /// every other client's `NEXT` (with 200 rooms, a `NEXT` waited 266 ms behind 5,000).
    package static let pendingLimit = 32

    package var state: State = .open
    package private(set) var items: [(group: UInt64, item: OutboxItem)] = []
    package private(set) var stagedBytes = 0
    /// The ``OutboxItem/pending(_:)`` replies staged and not yet taken (filled or not).
    package private(set) var pendingCount = 0
    /// The newest state line not yet written, and the group it waits for.
    package private(set) var latest: (line: ByteLine, group: UInt64)?
    /// State lines replaced in the slot by a newer one before they left (conflation).
    package private(set) var conflated: UInt64 = 0
    /// `OK`s of changes turned into `ERR 507` because their group failed (``fail(after:errorLine:)``).
    package private(set) var failedChanges: UInt64 = 0

    /// Whether anything waits to be written.
    package var isEmpty: Bool { items.isEmpty && latest == nil }

    /// Whether the client is gone or going: nothing new is staged for it.
    package var isClosingOrClosed: Bool { state == .closing || state == .closed }

    /// Queues a reply. An event already in the slot goes first if the client keeps up, so
    /// what a client reads follows the order things happened.
    package mutating func stage(_ item: OutboxItem, group: UInt64, backedUp: Bool) {
        if let slot = latest, !backedUp {
            append(.event(slot.line), group: slot.group)
            latest = nil
        }
        append(item, group: group)
    }

    /// A room's new state. The newest is kept in the slot; the one it replaces is kept too
    /// while the client keeps up.
    ///
    /// While a pending reply waits, the slot is only replaced: the reply (an `OK` carrying a
    /// version) then leaves before the newest state, never before an older one.
    package mutating func offer(_ line: ByteLine, group: UInt64, backedUp: Bool) {
        guard !isClosingOrClosed else { return }
        if let slot = latest {
            if !backedUp, stagedBytes < Self.burstBound, !hasUnfilledReply {
                append(.event(slot.line), group: slot.group)
            } else {
                conflated &+= 1
            }
        }
        latest = (line, group)
    }

    /// Whether a pending reply is still waiting for its answer.
    package var hasUnfilledReply: Bool {
        items.contains { if case .pending(let p) = $0.item { p.bytes == nil } else { false } }
    }

    /// Forgets the slot (the client moved to another room).
    package mutating func dropLatest() { latest = nil }

    /// The client is to be closed once what is staged has left. The state it was offered last
    /// leaves first, as before a reply staged now, unless the client is backed up (then only
    /// what is staged does); nothing offered after this leaves. (A client that half-closed
    /// right after its NEXT gets its OK and then the PAGE, however the turns fell.)
    package mutating func close(backedUp: Bool) {
        if let slot = latest, !backedUp { append(.event(slot.line), group: slot.group) }
        state = .closing
        latest = nil
    }

    /// Every item of a group after `after` failed: an `OK` for a change becomes `errorLine`,
    /// events are dropped, and what is left waits only for `after` (the failed groups count
    /// as settled once the groups before them are). Returns true if the slot was dropped
    /// (the client needs the room's current state again).
    package mutating func fail(after: UInt64, errorLine: [UInt8]) -> Bool {
        for i in items.indices where items[i].group > after {
            items[i].group = after
            switch items[i].item {
            case .change(let reply):
                failedChanges &+= 1
                stagedBytes += errorLine.count - reply.count
                items[i].item = .bytes(errorLine)
            case .event(let line):
                stagedBytes -= line.count
                items[i].item = .bytes([])
            case .state(let b, let reply):
                // It reported a state that is gone: the saved one is reported instead.
                items[i].item = .deferred(reply)
                stagedBytes += items[i].item.byteCount - b.count
            case .bytes, .deferred, .text, .pending:
                break
            }
        }
        if let slot = latest, slot.group > after {
            latest = nil
            return true
        }
        return false
    }

    /// Takes what may leave now: the items whose group is settled, in order, and then the
    /// slot if the client is not backed up and nothing before it waits. A closing client
    /// gets no event after its last reply.
    ///
    /// This form, returning a new array, is the tests'; the coordinator uses
    /// ``take(settled:backedUp:into:render:)``.
    package mutating func take(settled: UInt64, backedUp: Bool, render: (DeferredReply) -> [UInt8]) -> [[UInt8]] {
        var out: [OutboxChunk] = []
        take(settled: settled, backedUp: backedUp, into: &out, render: render)
        return out.map(\.bytes)
    }

    /// ``take(settled:backedUp:render:)``, appending to `out`: a buffer the caller reuses, so
    /// taking allocates no array of its own (a `.deferred` reply is still rendered when taken).
    /// `render` must not touch any outbox: the coordinator's sessions do not check their
    /// `outbox` for exclusivity at run time (see the note in TurnDelivery.swift).
    package mutating func take(settled: UInt64, backedUp: Bool, into out: inout [OutboxChunk],
                               render: (DeferredReply) -> [UInt8]) {
        var taken = 0
        var takenBytes = 0
        var takenPending = 0
        // Through the buffer: reading `items[taken]` copies the whole element each time.
        items.withUnsafeMutableBufferPointer { items in
            var partlySent = false
            taking: while taken < items.count, items[taken].group <= settled, !partlySent {
                switch items[taken].item {
                case .pending(let p):
                    guard let b = p.bytes else { break taking }  // not filled yet: it and what follows wait
                    if !b.isEmpty { out.append(.bytes(b)) }
                    takenPending += 1
                case .bytes(let b), .state(let b, _):
                    if !b.isEmpty { out.append(.bytes(b)) }
                case .change(let reply):
                    out.append(.navigated(reply))
                case .event(let line):
                    out.append(.line(line))
                case .deferred(let reply):
                    out.append(.bytes(render(reply)))
                case .text(var encoder, let size):
                    if let chunk = encoder.nextChunk(atLeast: Self.streamChunk) { out.append(.bytes(chunk)) }
                    if !encoder.isFinished {
                        // One piece per call: the rest waits until the client took this one.
                        items[taken].item = .text(encoder, size: size)
                        partlySent = true
                    }
                }
                if !partlySent {
                    takenBytes += items[taken].item.byteCount
                    taken += 1
                }
            }
        }
        stagedBytes -= takenBytes
        pendingCount -= takenPending
        if taken == items.count {
            // Its storage released, not kept: most members of a large room are idle, and each
            // kept ~120 bytes after its greeting; a member's next reply allocates a small one.
            items = []
            stagedBytes = 0
        } else if taken > 0 {
            items.removeFirst(taken)
        }
        if let slot = latest, items.isEmpty, slot.group <= settled, !backedUp, state != .closing {
            out.append(.line(slot.line))
            latest = nil
        }
    }

    /// The fan-out's fast path: takes the slot's line when it is all that waits and may
    /// leave now (its group settled, the client open and not backed up); otherwise nil and
    /// nothing changes, and ``take(settled:backedUp:render:)`` decides. Allocates nothing.
    package mutating func takeLatestAlone(settled: UInt64, backedUp: Bool) -> ByteLine? {
        guard state == .open, !backedUp, items.isEmpty, let slot = latest, slot.group <= settled else { return nil }
        latest = nil
        return slot.line
    }

    /// The fan-out's fastest path: whether a new state line, settled and the only one the
    /// client has not been offered, may go straight to the socket without entering the
    /// outbox. True when nothing waits here and the client is open; the line then leaves at
    /// once if the socket is idle (nothing queued in libuv), and is otherwise
    /// ``offer(_:group:backedUp:)``ed as to a backed-up client.
    package var takesLineDirectly: Bool {
        guard state == .open, items.isEmpty else { return false }
        // A pattern, not `latest == nil`: the generic comparison is slow in debug builds.
        if case .some = latest { return false }
        return true
    }

    /// Whether a large reply is partly sent: more of it can be taken now.
    package var isStreaming: Bool {
        if case .text? = items.first?.item { return true }
        return false
    }

    /// Whether output waits for a group that is not settled yet.
    package func waits(settled: UInt64) -> Bool {
        (items.first.map { $0.group > settled } ?? false) || (latest.map { $0.group > settled } ?? false)
    }

    /// Whether reading must pause: unsent output (staged here, plus `queued`: what the output
    /// queued in libuv holds in memory, its bytes and each queued write's bookkeeping) reached
    /// `highWater`.
    /// `highWater`, or ``pendingLimit`` replies wait for another process.
    package func mustPause(queued: Int, highWater: Int) -> Bool {
        stagedBytes + queued >= highWater || pendingCount >= Self.pendingLimit
    }

    /// Whether a paused client may read again: unsent output fell below half the high-water
    /// mark, and fewer than half of ``pendingLimit`` replies wait for another process.
    package func mayResume(queued: Int, highWater: Int) -> Bool {
        stagedBytes + queued < highWater / 2 && pendingCount < Self.pendingLimit / 2
    }

    private mutating func append(_ item: OutboxItem, group: UInt64) {
        items.append((group, item))
        stagedBytes += item.byteCount
        if case .pending = item { pendingCount += 1 }
    }
}
