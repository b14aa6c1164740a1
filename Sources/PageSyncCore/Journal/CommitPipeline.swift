/// When groups of journaled changes become acknowledged: the decisions of group commit,
/// without I/O.
///
/// The coordinator numbers each loop turn's changes as a group (1, 2, 3, ...) and the
/// engine writes each group with one `pwrite`. This type is told what the disk did and
/// answers with what to do next. At most one sync is in flight; groups written meanwhile
/// are covered together by the next one (one sync per group of groups, never one per room).
///
/// Failure means no acknowledgement: a group that could not be written or synced, and every
/// unacknowledged group after it, fails (the coordinator undoes them and answers `ERR 507`).
/// After a failed sync nothing written since the last good sync is known to be on disk
/// (PostgreSQL, 2018), so changes are refused until a fresh journal holding the whole
/// state has been written and synced (``Action/rewrite``).
///
/// Gathering (`always` mode). When a sync ends and more groups are already written, the
/// next sync does not start at once. It waits until as many records are written as the
/// finished sync and the waiting groups held together (the clients just answered are back),
/// or for half as long as the finished sync took, at most ``maximumGatherNanoseconds``,
/// whichever comes first. Without it, closed-loop clients split into two groups that take
/// turns, and each change waits for two syncs: the clients just answered write their next
/// change while the other group's sync, started the moment theirs ended, is in flight.
/// Redis gets the merge for free by syncing on its only thread.
public struct CommitPipeline: Equatable, Sendable {
    /// What the engine must do.
    public enum Action: Equatable, Sendable {
        /// Start one `fdatasync` covering every group up to `upTo`; report its end with
        /// ``syncFinished(serial:error:)`` and this `serial`.
        case sync(serial: Int, upTo: UInt64)
        /// Groups up to `upTo` are settled (durable, or failed and already undone): release
        /// their replies and events.
        case acknowledge(upTo: UInt64)
        /// Every group after `after` failed: undo them and refuse them with `reason`.
        case fail(after: UInt64, reason: String)
        /// Write and sync a fresh journal holding the whole state; changes are refused until
        /// ``rewriteFinished(error:)`` reports success.
        case rewrite
        /// A sync ended with groups waiting: call ``gatherEnded()`` after `nanoseconds`
        /// unless a ``sync(serial:upTo:)`` comes first (it cancels the wait).
        case gather(nanoseconds: UInt64)
    }

    /// The durability mode.
    public let mode: Durability
    /// The last group written to the journal file.
    public private(set) var written: UInt64 = 0
    /// The last group settled: every group up to it is acknowledged or has failed.
    public private(set) var acknowledged: UInt64 = 0
    /// The last group known to be on the device.
    public private(set) var synced: UInt64 = 0
    /// The group the sync in flight covers, if one is.
    public private(set) var syncing: UInt64?
    private var syncSerial = 0
    /// `always` mode: records written since the last sync started, and those the sync in
    /// flight covers.
    private var unsyncedRecords = 0
    private var syncingRecords = 0
    /// While gathering: how many unsynced records start the next sync, and the monotonic
    /// time at which a write starts it anyway.
    public private(set) var gatherTarget: Int?
    private var gatherDeadline: UInt64 = 0

    /// The longest a sync waits for the clients just answered (1 ms).
    public static let maximumGatherNanoseconds: UInt64 = 1_000_000
    /// Why changes are refused, while they are.
    public private(set) var refusal: String?

    /// A pipeline for `mode`, with nothing written.
    public init(mode: Durability) { self.mode = mode }

    /// Whether a new change may be made now (else it is answered
    /// `ERR 507 state not saved: <refusal>`).
    public var acceptsChanges: Bool { refusal == nil }

    /// Group `group` (the one after ``written``), holding `records` records, was written to
    /// the file at monotonic time `now` (nanoseconds).
    public mutating func didWrite(group: UInt64, records: Int = 1, at now: UInt64 = 0) -> [Action] {
        precondition(group == written + 1, "groups are written in order")
        written = group
        switch mode {
        case .batch:
            acknowledged = group
            return [.acknowledge(upTo: group)]
        case .always:
            unsyncedRecords += records
            if let target = gatherTarget {
                guard unsyncedRecords >= target || now >= gatherDeadline else { return [] }
                return gatherEnded()
            }
            return startSyncIfIdle()
        }
    }

    /// The wait asked for by ``Action/gather(nanoseconds:)`` is over: sync what is written,
    /// however much came back.
    public mutating func gatherEnded() -> [Action] {
        guard gatherTarget != nil else { return [] }
        gatherTarget = nil
        return startSyncIfIdle()
    }

    /// Group `group` was not written because changes are refused (it holds no change anyone
    /// asked for: a re-indexed document, a room's first record). It settles at once, so
    /// greetings and reads are not held up by a journal that cannot be written.
    public mutating func skipped(group: UInt64) -> [Action] {
        precondition(group == written + 1, "groups are written in order")
        written = group
        synced = max(synced, group)
        guard acknowledged < group else { return [] }
        acknowledged = group
        return [.acknowledge(upTo: group)]
    }

    /// The write of the group after ``written`` failed. `fileIntact`: the file was cut back
    /// to its last whole record, so later groups may be appended; if not, a rewrite is needed.
    /// The failed group keeps its number (numbers are never reused) and settles in order
    /// after the groups before it, so a client reads its replies in the order it sent commands.
    public mutating func writeFailed(reason: String, fileIntact: Bool) -> [Action] {
        let group = written + 1
        guard fileIntact else {
            written = group
            return fail(reason: reason)
        }
        return [.fail(after: written, reason: reason)] + didWrite(group: group, records: 0)
    }

    /// The journal cannot take records now (its boot marker could not be written at start):
    /// refuse changes until a rewrite succeeds.
    /// Nothing is written or pending then; the turn being formed holds the rooms' first
    /// records, which nobody asked for: they are skipped (``skipped(group:)``), not undone.
    public mutating func refuse(reason: String) -> [Action] {
        refusal = reason
        return [.rewrite]
    }

    /// The sync numbered `serial` finished at monotonic time `now` (nanoseconds), having taken
    /// `took`; `error` says why it failed. A sync that a failure made moot is ignored.
    public mutating func syncFinished(serial: Int, error: String?, at now: UInt64 = 0, took: UInt64 = 0) -> [Action] {
        guard let covered = syncing, serial == syncSerial else { return [] }
        syncing = nil
        if let error { return fail(reason: "sync failed: \(error)") }
        synced = max(synced, covered)
        var actions: [Action] = []
        if mode == .always && covered > acknowledged {
            acknowledged = covered
            actions.append(.acknowledge(upTo: covered))
        }
        if mode == .always && written > synced {
            let wait = min(took / 2, Self.maximumGatherNanoseconds)
            if unsyncedRecords > 0 && refusal == nil && wait > 0 {
                gatherTarget = syncingRecords + unsyncedRecords
                gatherDeadline = now + wait
                actions.append(.gather(nanoseconds: wait))
            } else {
                actions += startSyncIfIdle()
            }
        }
        return actions
    }

    /// A sync the engine made outside this pipeline failed (the directory sync after a
    /// compaction renamed its file into place): nothing written since the last good sync is
    /// known to be on disk. Handled exactly as a failed ``Action/sync(serial:upTo:)``.
    public mutating func syncFailed(reason: String) -> [Action] {
        fail(reason: "sync failed: \(reason)")
    }

    /// Once a second in `batch` mode: sync what was written since the last sync.
    public mutating func tick() -> [Action] {
        mode == .batch ? startSyncIfIdle() : []
    }

    /// The fresh journal asked for by ``Action/rewrite`` was written and synced (or not).
    /// On success it holds every written group, which are all durable from now on.
    public mutating func rewriteFinished(error: String?) -> [Action] {
        if let error {
            refusal = error
            return []
        }
        refusal = nil
        synced = written
        unsyncedRecords = 0
        if written > acknowledged {
            acknowledged = written
            return [.acknowledge(upTo: written)]
        }
        return []
    }

    private mutating func startSyncIfIdle() -> [Action] {
        guard syncing == nil, gatherTarget == nil, written > synced, refusal == nil else { return [] }
        syncing = written
        syncingRecords = unsyncedRecords
        unsyncedRecords = 0
        syncSerial += 1
        return [.sync(serial: syncSerial, upTo: written)]
    }

    /// Unacknowledged groups fail; acknowledged ones stand (in batch mode their replies are
    /// out: the rewrite makes them durable before any new change is accepted).
    /// Group numbers are never reused: failed groups count as settled.
    ///
    /// The changes of the turn being formed fail too, even when no group is unacknowledged
    /// (batch mode): they were accepted before the refusal, and the group they would become
    /// is not written but skipped, so without the `fail` they would be acknowledged unsaved.
    private mutating func fail(reason: String) -> [Action] {
        refusal = reason
        syncing = nil
        gatherTarget = nil
        var actions: [Action] = [.fail(after: acknowledged, reason: reason)]
        if written > acknowledged {
            acknowledged = written
            actions.append(.acknowledge(upTo: written))
        }
        actions.append(.rewrite)
        return actions
    }
}
