#if canImport(Glibc)
import Glibc
#endif
import Logging
import PageSyncCore
import UV

/// The embedded state engine: one append-only journal for every room in `state-dir`.
///
/// Each loop turn's changes are one group, written with one `write` before any reply about
/// them leaves. ``CommitPipeline`` decides when a group counts as saved: at once in `batch`
/// mode (synced at most once a second on libuv's thread pool), after one covering
/// `fdatasync` in `always` mode (group commit). ``JournalCompaction`` decides when the journal
/// is compacted (a snapshot of every room written to a new file on the thread pool, synced and
/// renamed into place while changes go on) and what a failure at each step of it means.
///
/// A group is acknowledged only once it is in the file a start reads: a group written to a
/// journal that was removed meanwhile fails (`batch` checks the link count after each write,
/// `always` after each sync), and after a failed sync or directory sync nothing since the last
/// good one counts as saved until the whole state is written again (``CommitPipeline``).
///
/// Files: `journal`, and briefly `journal.compact` or `journal.rewrite`. Loop thread only,
/// except ``load()`` and ``closeCleanly()``, which run while the loop is not running.
/// `@unchecked Sendable`: handed to the coordinator and, after the loop stopped, used for
/// ``closeCleanly()`` by the thread that ran the loop; never used by two threads at once.
public final class JournalEngine: StateEngine, @unchecked Sendable {
    public var onEvent: ((EngineEvent) -> Void)?
    public var snapshot: (() -> [SavedRoom])?
    public var refusal: String? { pipeline.refusal }
    public var isBusy: Bool { diskBusy || compaction.phase != .idle || compaction.snapshotJobRunning || rewriting }

    public var statistics: EngineStatistics {
        var statistics = counted
        statistics.journalBytes = UInt64(max(0, size))
        return statistics
    }

    /// Syncs and compactions counted (``statistics`` adds the journal's size).
    var counted: EngineStatistics

    /// Below this size the journal is compacted only when the disk's free space asks for it.
    public static let minimumCompactionSize = JournalCompaction.minimumSize

    let loop: EventLoop
    let directory: String
    let logger: Logger
    /// Changed only by its own mutating methods, which call nothing back, so its accesses
    /// are not checked for exclusivity at run time (see the note in TurnDelivery.swift).
    @exclusivity(unchecked) var pipeline: CommitPipeline
    let bootID: String
    var fd: Int32 = -1
    /// Where the records end: the next record is written here.
    var size = 0
    /// The zeros written ahead of the records (``JournalPreallocation``).
    var preallocation = JournalPreallocation(fileSize: 0)
    /// Bytes of the last snapshot's records: what the live state costs.
    var liveSize = 0
    /// What the journal's file system has free for it, as last read (at start and with each
    /// place check, at most once a second) less what the journal grew by since; nil if unknown.
    var freeSpace: Int?
    var syncTimer: UV.Timer?
    /// `always` mode: the wait for the clients just answered (``CommitPipeline``, gathering).
    var gatherTimer: UV.Timer?
    /// One disk job (a sync, or the end of a compaction) at a time, in order.
    var diskBusy = false
    /// Where syncs and place checks run: one pool thread that wakes the loop once per sync,
    /// without libuv 1.44's spin (``PoolLane``); nil if it cannot be made (then `queueWork`).
    lazy var syncLane: PoolLane? = PoolLane(loop: loop)
    var deferredSync: Int?
    var rewriting = false
    /// Retries of a failed rewrite: 100 ms, doubling up to 2 s.
    var rewriteBackoff = Backoff(longestMilliseconds: 2000)
    var retryTimer: UV.Timer?
    var outage: String?
    /// Why the journal could not be opened for writing at start, if it could not.
    var startupRefusal: String?
    /// Where a compaction is, and when the next may start.
    var compaction = JournalCompaction()
    /// The compacted file, from the end of its snapshot until it is adopted or abandoned.
    var newFD: Int32 = -1
    /// A write failed for want of space since the last that succeeded.
    var spaceFailed = false
    /// A compaction that failed for want of space was logged (until one succeeds).
    var spaceFailureLogged = false

    var journalPath: String { "\(directory)/journal" }
    var compactPath: String { "\(directory)/journal.compact" }
    /// When a sync last also checked that the journal is still where a start looks
    /// (``JournalFile/detached(_:from:)``), in monotonic nanoseconds.
    var lastPlaceCheck: UInt64 = 0
    static let placeCheckNanoseconds: UInt64 = 1_000_000_000
    /// `<directory>/lock`, held from ``load()`` until the process ends (``JournalFile/lockDirectory(_:)``).
    var lockFD: Int32 = -1

    /// An engine over `directory` (created if missing).
    public init(loop: EventLoop, directory: String, durability: Durability, logger: Logger) {
        self.loop = loop
        self.directory = directory
        self.logger = logger
        self.pipeline = CommitPipeline(mode: durability)
        self.counted = EngineStatistics(kind: .journal, durability: durability)
        self.bootID = JournalFile.bootID() ?? "unknown"
    }

    public func started() {
        if let why = startupRefusal {
            startupRefusal = nil
            perform(pipeline.refuse(reason: why))
        }
    }

    // MARK: - Groups

    public func submit(group: UInt64, rooms: [SavedRoom]) {
        if pipeline.refusal != nil {
            // Only changes nobody asked for reach here while changes are refused (a re-indexed
            // document; navigations get ERR 507 first). They are not written: the rewrite that
            // ends the refusal holds the whole state, and a document change is found again at
            // start anyway.
            perform(pipeline.skipped(group: group))
            return
        }
        if compaction.holdsGroups {
            // The disk is full and a compaction is making room: the group is not written (its
            // records could take the space the snapshot needs), and fails.
            perform(pipeline.writeFailed(reason: "No space left on device (compacting the journal to make room)", fileIntact: true))
            return
        }
        let records = JournalCodec.encode(rooms: rooms)
        if let failure = records.withUnsafeBytes({ writeRecords($0) }) {
            // Cut back to the last whole record so later groups can follow it.
            let intact = cutBack()
            reportOutage("cannot write the journal: \(failure)")
            perform(pipeline.writeFailed(reason: failure.description, fileIntact: intact))
            // A full disk: a compaction is what can make room (the journal is most of it).
            if failure.isOutOfSpace {
                spaceFailed = true
                startCompaction(forSpace: true)
            }
            return
        }
        // Written to a journal that was removed (the state dir deleted while the daemon ran),
        // the group is not saved: it fails, and the whole state is written again where a start
        // looks. `always` mode checks this after each sync, off the loop.
        // (While a compaction's finishing job may rename, the new file is the one to check: the
        // old one loses its name to it.)
        if pipeline.mode == .batch, let removed = JournalFile.unlinked(compaction.phase == .finishing ? newFD : fd) {
            reportOutage(removed)
            perform(pipeline.writeFailed(reason: removed, fileIntact: false))
            return
        }
        size += records.count
        if outage != nil && pipeline.refusal == nil {
            outage = nil
            logger.notice("journal: writing again")
        }
        if let at = compaction.groupWritten(records), !copyToCompactedFile(records, at: at) { return }
        perform(pipeline.didWrite(group: group, records: rooms.count, at: MonotonicClock.nanoseconds()))
        startCompaction(forSpace: false)
    }

    /// Writes `bytes` where the records end, after filling zeros ahead when the file ends
    /// there; nil on success, else why not. A failed fill is not a failure: the records are
    /// appended instead. The zeros are sized to the free space (``JournalPreallocation``).
    func writeRecords(_ bytes: UnsafeRawBufferPointer) -> FileFailure? {
        let before = preallocation.fileSize
        if let range = preallocation.fill(writing: bytes.count, at: size, free: freeSpace) {
            if let why = JournalFile.zeroFill(fd, range) {
                _ = ftruncate(fd, off_t(preallocation.fileSize))
                preallocation.fillFailed(at: size)
                // Not an outage: the records are appended, as they were before any fill. A
                // full disk shows in the write that fails next, logged once there.
                logger.debug("journal: cannot write zeros ahead of the records (\(why)); appending")
            } else {
                preallocation.filled(range)
            }
        }
        if let why = JournalFile.writeAll(fd, bytes, at: size) { return why }
        preallocation.wrote(upTo: size + bytes.count)
        if let free = freeSpace { freeSpace = max(0, free - (preallocation.fileSize - before)) }
        return nil
    }

    /// Makes `newFD`, a file of `size` bytes of records, the journal, closing the one before
    /// (whose space comes back to the free space estimate).
    func adopt(_ newFD: Int32, size: Int) {
        if let free = freeSpace { freeSpace = free + max(0, preallocation.fileSize - size) }
        close(fd)
        fd = newFD
        self.size = size
        preallocation = JournalPreallocation(fileSize: size)
    }

    /// Cuts the file back to its whole records (after a failed write); whether that worked.
    @discardableResult
    func cutBack() -> Bool {
        preallocation = JournalPreallocation(fileSize: size)
        return ftruncate(fd, off_t(size)) == 0
    }

    func perform(_ actions: [CommitPipeline.Action]) {
        for action in actions {
            switch action {
            case .sync(let serial, _):
                gatherTimer?.stop()
                if diskBusy { deferredSync = serial } else { startSync(serial: serial) }
            case .acknowledge(let upTo):
                onEvent?(.settled(upTo: upTo))
            case .fail(let after, let reason):
                onEvent?(.failed(after: after, reason: reason))
            case .rewrite:
                reportOutage(pipeline.refusal ?? "journal failed")
                startRewrite()
            case .gather(let nanoseconds):
                // libuv's timers count whole milliseconds; a write that comes back sooner
                // ends the wait on time (``CommitPipeline/didWrite(group:records:at:)``).
                let timer = gatherTimer ?? UV.Timer(loop: loop)
                gatherTimer = timer
                timer.start(afterMilliseconds: max(1, (nanoseconds + 999_999) / 1_000_000)) { [unowned self] in
                    self.perform(self.pipeline.gatherEnded())
                }
            }
        }
    }

    func reportOutage(_ text: String) {
        guard outage == nil else { return }
        outage = text
        logger.error("journal: \(text); changes get ERR 507 until the journal can be written again")
    }

    /// What a sync job found: the sync's failure (or the journal's removal), and the free
    /// space when it was read.
    struct SyncOutcome: Sendable {
        var error: String?
        var free: Int?
    }

    func startSync(serial: Int) {
        diskBusy = true
        let fd = self.fd
        let started = MonotonicClock.nanoseconds()
        // A sync of a file the next start will not find saves nothing: that is a failure too.
        // The link count is read after every sync (one fstat, off the loop); the path, and the
        // free space, at most once a second: two more system calls on every sync cost `always`
        // about a tenth of its changes per second at one client (measured).
        let path = journalPath
        let checkPlace = started >= lastPlaceCheck + Self.placeCheckNanoseconds
        if checkPlace { lastPlaceCheck = started }
        onSyncLane({ () -> SyncOutcome in
            let error = JournalFile.sync(fd) ?? JournalFile.unlinked(fd) ?? (checkPlace ? JournalFile.detached(fd, from: path) : nil)
            return SyncOutcome(error: error, free: checkPlace ? JournalFile.freeBytes(fd) : nil)
        }) { [self] outcome in
            diskBusy = false
            if let free = outcome.free { freeSpace = free }
            let now = MonotonicClock.nanoseconds()
            counted.synced(took: now - started, failed: outcome.error != nil)
            perform(pipeline.syncFinished(serial: serial, error: outcome.error, at: now, took: now - started))
            runDeferredDiskJob()
        }
    }

    /// Once a second in `batch` mode: sync what is written; with nothing to sync, check that the
    /// journal is still there, so a state dir removed while the daemon is idle is written again
    /// (the whole state, with the rooms' epochs) before the next change rather than after it.
    func tick() {
        let actions = pipeline.tick()
        guard actions.isEmpty else { return perform(actions) }
        guard !diskBusy, !rewriting, compaction.phase == .idle, pipeline.refusal == nil, startupRefusal == nil else { return }
        diskBusy = true
        let fd = self.fd
        let path = journalPath
        onSyncLane({ SyncOutcome(error: JournalFile.detached(fd, from: path), free: JournalFile.freeBytes(fd)) }) { [self] outcome in
            diskBusy = false
            if let free = outcome.free { freeSpace = free }
            if let removed = outcome.error, pipeline.refusal == nil, fd == self.fd {
                reportOutage(removed)
                perform(pipeline.refuse(reason: removed))
            }
            runDeferredDiskJob()
        }
    }

    func onSyncLane<Result: Sendable>(_ work: @escaping @Sendable () -> Result, then completion: @escaping (Result) -> Void) {
        if let syncLane { syncLane.submit(work, completion: completion) } else { loop.queueWork(work, completion: completion) }
    }

    func runDeferredDiskJob() {
        guard !diskBusy else { return }
        if compaction.readyToFinish {
            finishCompaction()
        } else if let serial = deferredSync {
            deferredSync = nil
            // A failure since it was asked for ended the sync it stood for.
            if pipeline.syncing != nil { startSync(serial: serial) }
        }
    }

    // MARK: - Stop

    public func closeCleanly() {
        syncTimer?.close()
        retryTimer?.close()
        gatherTimer?.close()
        guard fd >= 0 else { return }
        // Not while refusing: after a failed write or rewrite the journal's end is not known
        // good, and a start that could not rewrite the journal must leave it as found.
        if pipeline.refusal == nil, startupRefusal == nil, compaction.phase == .idle {
            // The zeros ahead go: a stopped daemon's journal holds its records only.
            let closed = JournalCodec.encode(.closed)
            let end = size + closed.count
            if let why = JournalFile.writeAll(fd, closed, at: size).map({ $0.description })
                ?? (ftruncate(fd, off_t(end)) == 0 ? nil : String(cString: strerror(errno))) ?? JournalFile.sync(fd)
            {
                logger.error("journal: cannot record a clean stop: \(why)")
            }
        }
        close(fd)
        fd = -1
    }
}
