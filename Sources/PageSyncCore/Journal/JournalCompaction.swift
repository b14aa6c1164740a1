/// The decisions of journal compaction, without I/O: when it starts, where each group's
/// records go while it runs, and what a failure at each step means.
///
/// A compaction writes a snapshot of every room to a new file on the thread pool while
/// changes go on (``Phase/snapshotting``), appends the records written meanwhile, writes each
/// later group to both files (``Phase/switching``), and then, as the one disk job in flight,
/// syncs the new file, renames it over the journal and syncs the directory
/// (``Phase/finishing``).
///
/// The rename is the turning point. Before it the old file is the journal and holds every
/// record, so any failure only abandons the compaction. From the moment the job may have
/// renamed, the new file may be the journal: a group that cannot be written to it fails, and
/// when the job ends having renamed, the new file is adopted whatever failed after the rename.
/// A failed directory sync is a failed sync (nothing since the last good sync is known to be
/// on disk), handled as ``CommitPipeline`` handles one. A rewrite asked for while the job is in
/// flight waits for it: the job still uses the new file.
public struct JournalCompaction: Equatable, Sendable {
    /// Where a compaction is.
    public enum Phase: Equatable, Sendable {
        /// No compaction runs.
        case idle
        /// The snapshot is being written on the thread pool; groups written meanwhile are kept
        /// in ``JournalCompaction/tail``, to be appended to the new file after it.
        case snapshotting
        /// The new file holds the snapshot and the tail; each group is written to both files
        /// until the disk is free for the finishing job.
        case switching
        /// The job that syncs the new file, renames it over the journal and syncs the
        /// directory is in flight; each group is still written to both files.
        case finishing
    }

    /// What to do with the new file when a group cannot be written to it.
    public enum NewFileFailure: Equatable, Sendable {
        /// Close and remove it: the journal (the old file) holds the group.
        case abandon
        /// The new file may already be the journal: the group fails (cut it back from both
        /// files) and the compaction goes on; the group is not acknowledged.
        case failGroup
    }

    /// How the finishing job ended.
    public enum Finish: Equatable, Sendable {
        /// The new file was not renamed (its sync or the rename failed): the old file is
        /// still the journal.
        case notRenamed(reason: String)
        /// The new file is the journal now; `directorySyncError` says why the rename may not
        /// be on the device, if it may not.
        case renamed(directorySyncError: String?)
    }

    /// What the engine does when the finishing job ends.
    public enum FinishAction: Equatable, Sendable {
        /// Close and remove the new file; log `reason`; try again later.
        case abandon(reason: String)
        /// Make the new file (``JournalCompaction/newSize`` bytes of records) the journal.
        case adopt(size: Int)
        /// Make the new file the journal, then report a failed sync with `reason`: the groups
        /// not yet acknowledged fail and the journal is written again (``CommitPipeline``).
        case adoptAfterFailedSync(size: Int, reason: String)
    }

    /// Below this size a journal is compacted only when the disk's free space asks for it.
    public static let minimumSize = 1 << 20
    /// How long after a failed compaction the next may start, in milliseconds.
    public static let retryAfterFailure: UInt64 = 10_000
    /// How long after a compaction that failed for want of space the next may start: the
    /// space may come back at any moment, and nothing else can free it.
    public static let retryOnFullDisk: UInt64 = 1_000

    /// Where the compaction is.
    public private(set) var phase: Phase = .idle
    /// Records written while snapshotting.
    public private(set) var tail: [UInt8] = []
    /// Bytes of records in the new file (snapshot, tail and groups written to it since).
    public private(set) var newSize = 0
    /// No compaction starts before this monotonic time, in milliseconds.
    public private(set) var notBefore: UInt64 = 0
    /// A rewrite was asked for while finishing; it starts when the job ends.
    public private(set) var rewriteWaiting = false
    /// A snapshot job is on the thread pool (it writes `journal.compact`): no other starts
    /// until it ended, even when the compaction it belonged to was given up.
    public private(set) var snapshotJobRunning = false
    /// The running compaction was started because the disk is full.
    public private(set) var startedForSpace = false

    /// No compaction, none tried.
    public init() {}

    /// Whether a compaction should start now, with `records` bytes of records in the journal,
    /// `live` bytes for a snapshot of every room, and `free` bytes free on the journal's file
    /// system (nil when not known). A journal is compacted once it is more than four times its
    /// live state and either passes ``minimumSize`` or takes as much as the space left: on a
    /// small disk the journal then never fills it, and the snapshot always fits.
    /// `forSpace`: a write just failed for want of space, so any gain counts.
    /// `spaceCameBack`: a write just succeeded after one failed for want of space; the space
    /// may be gone again soon (records use it too), so the wait after a failure is not kept.
    public func isDue(records: Int, live: Int, free: Int?, now: UInt64, forSpace: Bool = false, spaceCameBack: Bool = false) -> Bool {
        guard phase == .idle, !snapshotJobRunning, now >= notBefore || spaceCameBack else { return false }
        if spaceCameBack { return records > live }
        if forSpace { return records > live }
        guard records > 4 * live else { return false }
        if records > Self.minimumSize { return true }
        if let free, records >= free { return true }
        return false
    }

    /// A compaction starts: the snapshot is being written. `forSpace`: it was started because
    /// the disk is full (``isDue(records:live:free:now:forSpace:spaceCameBack:)``), so it
    /// ``holdsGroups`` until it ends.
    public mutating func start(forSpace: Bool = false) {
        precondition(phase == .idle && !snapshotJobRunning, "one compaction at a time")
        phase = .snapshotting
        snapshotJobRunning = true
        startedForSpace = forSpace
        tail = []
        newSize = 0
        rewriteWaiting = false
    }

    /// Whether groups are refused (not written) now: a compaction started because the disk is
    /// full is running, and the little space there is goes to it. Written meanwhile, records
    /// could take the page the snapshot needs, and the journal would stay full for good.
    public var holdsGroups: Bool { startedForSpace && phase != .idle }

    /// A group of `records` was written to the journal. Returns the offset in the new file at
    /// which to write it too, or nil (kept in the tail, or no compaction runs).
    public mutating func groupWritten(_ records: [UInt8]) -> Int? {
        switch phase {
        case .idle: return nil
        case .snapshotting:
            tail += records
            return nil
        case .switching, .finishing:
            return newSize
        }
    }

    /// The group asked for by ``groupWritten(_:)`` was written to the new file.
    public mutating func newFileWritten(count: Int) {
        newSize += count
    }

    /// The group could not be written to the new file (which was cut back to ``newSize``).
    public mutating func newFileWriteFailed(reason: String, now: UInt64) -> NewFileFailure {
        switch phase {
        case .finishing:
            return .failGroup
        case .idle, .snapshotting, .switching:
            stop(now: now, retryAfter: Self.retryAfterFailure)
            return .abandon
        }
    }

    /// The snapshot job ended: on success the new file holds `snapshotSize` bytes, to which
    /// the engine must append ``tail`` next (``tailAppended(error:now:fullDisk:)``).
    /// Returns false when the compaction is over: the job failed (the engine logs `error`), or
    /// the compaction was given up meanwhile (the engine closes and removes the new file).
    public mutating func snapshotWritten(size snapshotSize: Int, error: String?, now: UInt64, fullDisk: Bool = false) -> Bool {
        snapshotJobRunning = false
        guard phase == .snapshotting else { return false }
        if error != nil {
            stop(now: now, retryAfter: fullDisk ? Self.retryOnFullDisk : Self.retryAfterFailure)
            return false
        }
        newSize = snapshotSize
        return true
    }

    /// The tail was appended after the snapshot (or not: `error`). On success the new file
    /// takes each group from now on, until ``finishStarted()``.
    public mutating func tailAppended(error: String?, now: UInt64, fullDisk: Bool = false) -> Bool {
        precondition(phase == .snapshotting, "the tail is appended right after the snapshot")
        if error != nil {
            stop(now: now, retryAfter: fullDisk ? Self.retryOnFullDisk : Self.retryAfterFailure)
            return false
        }
        newSize += tail.count
        tail = []
        phase = .switching
        return true
    }

    /// Whether the finishing job may start (the new file is complete and no disk job runs).
    public var readyToFinish: Bool { phase == .switching }

    /// The finishing job starts.
    public mutating func finishStarted() {
        precondition(phase == .switching, "finishing follows switching")
        phase = .finishing
    }

    /// The finishing job ended as `finish` says.
    public mutating func finishEnded(_ finish: Finish, now: UInt64) -> FinishAction {
        precondition(phase == .finishing, "only a finishing job ends")
        let size = newSize
        switch finish {
        case .notRenamed(let reason):
            stop(now: now, retryAfter: Self.retryAfterFailure)
            return .abandon(reason: reason)
        case .renamed(nil):
            stop(now: 0, retryAfter: 0)
            return .adopt(size: size)
        case .renamed(let reason?):
            stop(now: 0, retryAfter: 0)
            return .adoptAfterFailedSync(size: size, reason: "directory sync after compaction: \(reason)")
        }
    }

    /// A rewrite of the journal was asked for. Returns true when the engine may abandon the
    /// compaction and rewrite now; false while the finishing job is in flight (the rewrite
    /// waits: ``rewriteWaiting``, then ``takeWaitingRewrite()`` once it ended).
    public mutating func rewriteRequested(now: UInt64) -> Bool {
        guard phase == .finishing else {
            if phase != .idle { stop(now: now, retryAfter: Self.retryAfterFailure) }
            return true
        }
        rewriteWaiting = true
        return false
    }

    /// Whether a rewrite waited for the finishing job (and no longer does).
    public mutating func takeWaitingRewrite() -> Bool {
        defer { rewriteWaiting = false }
        return rewriteWaiting
    }

    private mutating func stop(now: UInt64, retryAfter: UInt64) {
        phase = .idle
        tail = []
        notBefore = now + retryAfter
    }
}
