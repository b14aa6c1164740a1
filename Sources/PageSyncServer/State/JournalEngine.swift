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
/// `fdatasync` in `always` mode (group commit). When the journal passes
/// max(1 MiB, 4 × the live state) it is compacted: a snapshot of every room is written to
/// a new file on the thread pool, synced and renamed into place, while changes go on.
///
/// Files: `journal`, and briefly `journal.compact` or `journal.rewrite`. Loop thread only,
/// except ``load()`` and ``closeCleanly()``, which run while the loop is not running.
/// `@unchecked Sendable`: handed to the coordinator and, after the loop stopped, used for
/// ``closeCleanly()`` by the thread that ran the loop; never used by two threads at once.
public final class JournalEngine: StateEngine, @unchecked Sendable {
    public var onEvent: ((EngineEvent) -> Void)?
    public var snapshot: (() -> [SavedRoom])?
    public var refusal: String? { pipeline.refusal }
    public var isBusy: Bool { diskBusy || compaction != nil || rewriting }

    /// Below this size the journal is never compacted.
    public static let minimumCompactionSize = 1 << 20

    private let loop: EventLoop
    private let directory: String
    private let logger: Logger
    /// Changed only by its own mutating methods, which call nothing back, so its accesses
    /// are not checked for exclusivity at run time (see the note in Coordinator.swift).
    @exclusivity(unchecked) private var pipeline: CommitPipeline
    private let bootID: String
    private var fd: Int32 = -1
    /// Where the records end: the next record is written here.
    private var size = 0
    /// The zeros written ahead of the records (``JournalPreallocation``).
    private var preallocation = JournalPreallocation(fileSize: 0)
    /// Bytes of the last snapshot's records: what the live state costs.
    private var liveSize = 0
    private var syncTimer: UV.Timer?
    /// `always` mode: the wait for the clients just answered (``CommitPipeline``, gathering).
    private var gatherTimer: UV.Timer?
    /// One disk job (a sync, or the end of a compaction) at a time, in order.
    private var diskBusy = false
    /// Where syncs and place checks run: one pool thread that wakes the loop once per sync,
    /// without libuv 1.44's spin (``PoolLane``); nil if it cannot be made (then `queueWork`).
    private lazy var syncLane: PoolLane? = PoolLane(loop: loop)
    private var deferredSync: (serial: Int, upTo: UInt64)?
    private var rewriting = false
    private var rewriteBackoffMs: UInt64 = 100
    private var retryTimer: UV.Timer?
    private var outage: String?
    /// Why the journal could not be opened for writing at start, if it could not.
    private var startupRefusal: String?

    private enum Compaction {
        /// The snapshot is being written; records written meanwhile are kept to append.
        case snapshotting(tail: [UInt8])
        /// The new file has everything; records go to both files until it is renamed into place.
        case switching(fd: Int32, size: Int)
    }
    private var compaction: Compaction?
    private var compactionBackoffUntil: UInt64 = 0

    private var journalPath: String { "\(directory)/journal" }
    /// When a sync last also checked that the journal is still where a start looks
    /// (``JournalFile/detached(_:from:)``), in monotonic nanoseconds.
    private var lastPlaceCheck: UInt64 = 0
    private static let placeCheckNanoseconds: UInt64 = 1_000_000_000
    /// `<directory>/lock`, held from ``load()`` until the process ends (``JournalFile/lockDirectory(_:)``).
    private var lockFD: Int32 = -1

    /// An engine over `directory` (created if missing).
    public init(loop: EventLoop, directory: String, durability: Durability, logger: Logger) {
        self.loop = loop
        self.directory = directory
        self.logger = logger
        self.pipeline = CommitPipeline(mode: durability)
        self.bootID = JournalFile.bootID() ?? "unknown"
    }

    // MARK: - Start

    public func load() throws(StateEngineError) -> LoadedState {
        try JournalFile.makeDirectory(directory)
        if lockFD < 0 { lockFD = try JournalFile.lockDirectory(directory) }
        unlink("\(directory)/journal.compact")
        unlink("\(directory)/journal.rewrite")
        fd = open(journalPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateEngineError(JournalFile.reason(journalPath)) }
        // A FIFO or a device (a link to /dev/zero is read forever) is no journal.
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            fd = -1
            throw StateEngineError("\(journalPath): not a regular file")
        }
        let bytes: [UInt8]
        switch JournalFile.readAll(fd) {
        case .success(let b): bytes = b
        case .failure(let e): throw StateEngineError("\(journalPath): \(e)")
        }
        var recovery = JournalRecovery(scanning: bytes)
        let start = recovery.start(currentBootID: bootID, newEpoch: .random())
        var rooms = start.rooms
        for damage in recovery.damage {
            switch damage {
            case .tornTail(let offset, let dropped):
                logger.warning("journal: dropping a torn last record (\(dropped) byte(s) at offset \(offset)); every whole record before it is kept")
            case .lostRecords(let offset, let skipped):
                logger.error("journal: \(skipped) damaged byte(s) at offset \(offset) with records after them; rooms start a new epoch")
            }
        }
        var rewrite = start.rewrite
        if bytes.isEmpty {
            let imported = importStateFiles()
            if !imported.isEmpty {
                for (name, saved) in imported { rooms[name] = saved }
                recovery.recordCount = imported.count
                rewrite = true
                logger.notice("journal: imported \(imported.count) room(s) from .state files")
            }
        }
        if let reason = start.newEpochReason { logger.warning("journal: \(reason): every room starts a new epoch") }
        if rewrite {
            // Replace the file by a clean one now, holding the rooms as they will be served
            // (a new epoch included), before this boot's marker is written: so the same damage
            // is not found again, and a new epoch is not forgotten should this start fail.
            let fresh = JournalCodec.encode(rooms: Array(rooms.values))
            switch JournalFile.replace(journalPath, temp: "\(directory)/journal.rewrite", directory: directory, with: fresh) {
            case .success(let newFD):
                adopt(newFD, size: fresh.count)
                removeImportedStateFiles()
            case .failure(let e):
                // The old journal stays as it was (it still shows why, for the next start):
                // nothing is written to it, not even a clean stop should this start fail
                // (closeCleanly), and changes are refused until the rewrite after start, of
                // the whole state as served, succeeds.
                startupRefusal = "cannot rewrite the journal: \(e)"
                size = bytes.count
            }
        } else {
            if recovery.validLength < bytes.count && ftruncate(fd, off_t(recovery.validLength)) != 0 {
                throw StateEngineError(JournalFile.reason("\(journalPath): truncate"))
            }
            size = recovery.validLength
            preallocation = JournalPreallocation(fileSize: size)
        }
        // The boot marker is on the device before anything is acknowledged, so a reboot
        // after an unclean stop is always recognized.
        let opened = JournalCodec.encode(.opened(bootID: bootID))
        if startupRefusal != nil {
            // Nothing is written to a journal that could not be rewritten.
        } else if let why = opened.withUnsafeBytes({ writeRecords($0) }) ?? JournalFile.sync(fd) {
            // A full disk must not keep the daemon from serving what it has: it starts, and
            // refuses changes until a fresh journal (with this boot's marker) can be written.
            cutBack()
            startupRefusal = "cannot write the journal: \(why)"
        } else {
            size += opened.count
        }
        // What a snapshot of the recovered state would take: the base of the compaction rule.
        liveSize = encodeSnapshot(Array(rooms.values)).count
        if pipeline.mode == .batch {
            let timer = UV.Timer(loop: loop)
            timer.start(afterMilliseconds: 1000, repeatMilliseconds: 1000) { [unowned self] in self.tick() }
            syncTimer = timer
        }
        logger.info("journal: \(recovery.recordCount) record(s), \(rooms.count) room(s), \(size) bytes; durability \(pipeline.mode)")
        // A new epoch is already in the rooms (and recorded, or changes are refused until it is).
        return LoadedState(rooms: rooms)
    }

    /// Rooms saved by versions before the journal (`<room>.state`), each with a new epoch.
    private func importStateFiles() -> [String: SavedRoom] {
        var result: [String: SavedRoom] = [:]
        for name in stateFileNames() {
            let room = String(name.dropLast(".state".count))
            let fd = open("\(directory)/\(name)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard case .success(let bytes) = JournalFile.readAll(fd), let old = PersistedRoomCodec.decode(bytes) else {
                logger.warning("journal: \(directory)/\(name) is not a pagesync state file; room \(room) starts anew")
                continue
            }
            result[room] = SavedRoom(room: room, page: old.page, version: old.version, by: old.by, doc: old.doc ?? "", epoch: .random())
        }
        return result
    }

    private func removeImportedStateFiles() {
        for name in stateFileNames() { unlink("\(directory)/\(name)") }
    }

    private func stateFileNames() -> [String] {
        (DirectoryEntries.names(in: directory) ?? []).filter {
            $0.hasSuffix(".state") && !$0.hasPrefix(".") && $0.count > ".state".count
        }
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
        let records = JournalCodec.encode(rooms: rooms)
        let failure = records.withUnsafeBytes { writeRecords($0) }
        if let failure {
            // Cut back to the last whole record so later groups can follow it.
            let intact = cutBack()
            reportOutage("cannot write the journal: \(failure)")
            perform(pipeline.writeFailed(reason: failure, fileIntact: intact))
            return
        }
        size += records.count
        if outage != nil && pipeline.refusal == nil {
            outage = nil
            logger.notice("journal: writing again")
        }
        switch compaction {
        case .snapshotting(var tail)?:
            compaction = nil
            tail += records
            compaction = .snapshotting(tail: tail)
        case .switching(let newFD, let newSize)?:
            if let why = records.withUnsafeBytes({ JournalFile.writeAll(newFD, $0, at: newSize) }) {
                abandonCompaction("cannot write the compacted journal: \(why)")
            } else {
                compaction = .switching(fd: newFD, size: newSize + records.count)
            }
        case nil:
            break
        }
        perform(pipeline.didWrite(group: group, records: rooms.count, at: MonotonicClock.nanoseconds()))
        if compaction == nil && !rewriting && pipeline.refusal == nil && size > max(Self.minimumCompactionSize, 4 * liveSize) {
            startCompaction()
        }
    }

    /// Writes `bytes` where the records end, after filling zeros ahead when the file ends
    /// there; nil on success, else why not. A failed fill is not a failure: the records are
    /// appended instead.
    private func writeRecords(_ bytes: UnsafeRawBufferPointer) -> String? {
        if let range = preallocation.fill(writing: bytes.count, at: size) {
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
        return nil
    }

    /// Makes `newFD`, a file of `size` bytes of records, the journal, closing the one before.
    private func adopt(_ newFD: Int32, size: Int) {
        close(fd)
        fd = newFD
        self.size = size
        preallocation = JournalPreallocation(fileSize: size)
    }

    /// Cuts the file back to its whole records (after a failed write); whether that worked.
    @discardableResult
    private func cutBack() -> Bool {
        preallocation = JournalPreallocation(fileSize: size)
        return ftruncate(fd, off_t(size)) == 0
    }

    private func perform(_ actions: [CommitPipeline.Action]) {
        for action in actions {
            switch action {
            case .sync(let serial, let upTo):
                gatherTimer?.stop()
                if diskBusy { deferredSync = (serial, upTo) } else { startSync(serial: serial) }
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

    private func reportOutage(_ text: String) {
        guard outage == nil else { return }
        outage = text
        logger.error("journal: \(text); changes get ERR 507 until the journal can be written again")
    }

    private func startSync(serial: Int) {
        diskBusy = true
        let fd = self.fd
        let started = MonotonicClock.nanoseconds()
        // A sync of a file the next start will not find saves nothing: that is a failure too.
        // Checked at most once a second: two more system calls on every sync cost `always`
        // about a tenth of its changes per second at one client (measured).
        let path = journalPath
        let checkPlace = started >= lastPlaceCheck + Self.placeCheckNanoseconds
        if checkPlace { lastPlaceCheck = started }
        onSyncLane({ JournalFile.sync(fd) ?? (checkPlace ? JournalFile.detached(fd, from: path) : nil) }) { [self] error in
            diskBusy = false
            let now = MonotonicClock.nanoseconds()
            perform(pipeline.syncFinished(serial: serial, error: error, at: now, took: now - started))
            runDeferredDiskJob()
        }
    }

    /// Once a second in `batch` mode: sync what is written; with nothing to sync, check that the
    /// journal is still there, so a state dir removed while the daemon is idle is written again
    /// (the whole state, with the rooms' epochs) before the next change rather than after it.
    private func tick() {
        let actions = pipeline.tick()
        guard actions.isEmpty else { return perform(actions) }
        guard !diskBusy, !rewriting, compaction == nil, pipeline.refusal == nil, startupRefusal == nil else { return }
        diskBusy = true
        let fd = self.fd
        let path = journalPath
        onSyncLane({ JournalFile.detached(fd, from: path) }) { [self] removed in
            diskBusy = false
            if let removed, pipeline.refusal == nil, fd == self.fd {
                reportOutage(removed)
                perform(pipeline.refuse(reason: removed))
            }
            runDeferredDiskJob()
        }
    }

    private func onSyncLane(_ work: @escaping @Sendable () -> String?, then completion: @escaping (String?) -> Void) {
        if let syncLane { syncLane.submit(work, completion: completion) } else { loop.queueWork(work, completion: completion) }
    }

    private func runDeferredDiskJob() {
        guard !diskBusy else { return }
        if case .switching? = compaction {
            finishCompaction()
        } else if let (serial, _) = deferredSync {
            deferredSync = nil
            startSync(serial: serial)
        }
    }

    // MARK: - Rewrite after a failure

    /// Writes the whole current state to a fresh journal; until that is synced and in place,
    /// changes are refused. Retried with a growing delay (100 ms to 2 s).
    private func startRewrite() {
        guard !rewriting, let snapshot else { return }
        if compaction != nil { abandonCompaction("a failure interrupted compaction") }
        rewriting = true
        let bytes = encodeSnapshot(snapshot())
        let (path, temp, dir, lock) = (journalPath, "\(directory)/journal.rewrite", directory, lockFD)
        loop.queueWork({ () -> (Result<Int32, StateEngineError>, Result<Int32, StateEngineError>?) in
            let result = JournalFile.replace(path, temp: temp, directory: dir, with: bytes)
            // A state dir made again has no lock: this daemon takes it again.
            guard case .success = result, lock >= 0 else { return (result, nil) }
            return (result, JournalFile.relock(lock, dir))
        }) { [self] (result, relocked) in
            rewriting = false
            switch relocked {
            case .success(let fresh)?:
                close(lockFD)
                lockFD = fresh
            case .failure(let error)?:
                logger.error("journal: cannot lock the state dir made again: \(error)")
            case nil:
                break
            }
            switch result {
            case .success(let newFD):
                adopt(newFD, size: bytes.count)
                liveSize = size
                rewriteBackoffMs = 100
                outage = nil
                logger.notice("journal: rewritten with the whole state (\(size) bytes); accepting changes again")
                perform(pipeline.rewriteFinished(error: nil))
            case .failure(let error):
                perform(pipeline.rewriteFinished(error: "\(error)"))
                scheduleRewriteRetry()
            }
        }
    }

    private func scheduleRewriteRetry() {
        let timer = retryTimer ?? UV.Timer(loop: loop)
        retryTimer = timer
        timer.start(afterMilliseconds: rewriteBackoffMs) { [unowned self] in self.startRewrite() }
        rewriteBackoffMs = min(rewriteBackoffMs * 2, 2000)
    }

    // MARK: - Compaction

    /// A whole journal: every room's state, then this boot's marker.
    private func encodeSnapshot(_ rooms: [SavedRoom]) -> [UInt8] {
        JournalCodec.encode(rooms: rooms) + JournalCodec.encode(.opened(bootID: bootID))
    }

    private func startCompaction() {
        guard let snapshot, MonotonicClock.milliseconds() >= compactionBackoffUntil else { return }
        let bytes = encodeSnapshot(snapshot())
        compaction = .snapshotting(tail: [])
        let temp = "\(directory)/journal.compact"
        let snapshotSize = bytes.count
        loop.queueWork({ () -> Result<Int32, StateEngineError> in
            let fd = open(temp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return .failure(StateEngineError(JournalFile.reason(temp))) }
            if let why = bytes.withUnsafeBytes({ JournalFile.writeAll(fd, $0, at: 0) }) ?? JournalFile.sync(fd) {
                close(fd)
                unlink(temp)
                return .failure(StateEngineError("\(temp): \(why)"))
            }
            return .success(fd)
        }) { [self] result in
            guard case .snapshotting(let tail)? = compaction else {
                if case .success(let fd) = result { close(fd); unlink(temp) }
                return
            }
            switch result {
            case .failure(let error):
                compaction = nil
                compactionFailed("\(error)")
            case .success(let newFD):
                if let why = tail.withUnsafeBytes({ JournalFile.writeAll(newFD, $0, at: snapshotSize) }) {
                    close(newFD)
                    unlink(temp)
                    compaction = nil
                    compactionFailed("\(temp): \(why)")
                    return
                }
                liveSize = snapshotSize
                compaction = .switching(fd: newFD, size: snapshotSize + tail.count)
                runDeferredDiskJob()
            }
        }
    }

    /// Syncs the new file, renames it over the journal and syncs the directory, as the one
    /// disk job in flight: a sync queued after it covers the new file.
    private func finishCompaction() {
        guard case .switching(let newFD, _)? = compaction else { return }
        diskBusy = true
        let (temp, path, dir) = ("\(directory)/journal.compact", journalPath, directory)
        loop.queueWork({ () -> String? in
            if let why = JournalFile.sync(newFD) { return "sync: \(why)" }
            guard rename(temp, path) == 0 else { return JournalFile.reason("rename") }
            return JournalFile.syncDirectory(dir).map { "directory sync: \($0)" }
        }) { [self] error in
            diskBusy = false
            if let error {
                abandonCompaction(error)
            } else if case .switching(let newFD, let newSize)? = compaction {
                adopt(newFD, size: newSize)
                compaction = nil
                logger.info("journal: compacted to \(newSize) bytes")
            }
            runDeferredDiskJob()
        }
    }

    private func abandonCompaction(_ why: String) {
        if case .switching(let newFD, _)? = compaction {
            close(newFD)
            unlink("\(directory)/journal.compact")
        }
        compaction = nil
        compactionFailed(why)
    }

    private func compactionFailed(_ why: String) {
        logger.warning("journal: compaction failed (\(why)); trying again in 10 s")
        compactionBackoffUntil = MonotonicClock.milliseconds() + 10_000
    }

    // MARK: - Stop

    public func closeCleanly() {
        syncTimer?.close()
        retryTimer?.close()
        gatherTimer?.close()
        guard fd >= 0 else { return }
        // Not while refusing: after a failed write or rewrite the journal's end is not known
        // good, and a start that could not rewrite the journal must leave it as found.
        if pipeline.refusal == nil, startupRefusal == nil, compaction == nil {
            // The zeros ahead go: a stopped daemon's journal holds its records only.
            let closed = JournalCodec.encode(.closed)
            let end = size + closed.count
            if let why = closed.withUnsafeBytes({ JournalFile.writeAll(fd, $0, at: size) })
                ?? (ftruncate(fd, off_t(end)) == 0 ? nil : String(cString: strerror(errno))) ?? JournalFile.sync(fd)
            {
                logger.error("journal: cannot record a clean stop: \(why)")
            }
        }
        close(fd)
        fd = -1
    }
}
