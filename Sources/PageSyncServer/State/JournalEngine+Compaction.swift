#if canImport(Glibc)
import Glibc
#endif
import Logging
import PageSyncCore
import UV

extension JournalEngine {
    // MARK: - Compaction (``JournalCompaction`` decides; this carries it out)

    /// A whole journal: every room's state, then this boot's marker.
    func encodeSnapshot(_ rooms: [SavedRoom]) -> [UInt8] {
        JournalCodec.encode(rooms: rooms) + JournalCodec.encode(.opened(bootID: bootID))
    }

    /// Starts a compaction when one is due (after each group written, or `forSpace` after a
    /// write failed for want of space). After such a failure, the first write that succeeds
    /// starts one at once: space came back, and the records would soon use it up again.
    func startCompaction(forSpace: Bool) {
        let spaceCameBack = !forSpace && spaceFailed
        if spaceCameBack { spaceFailed = false }
        guard !rewriting, pipeline.refusal == nil, let snapshot,
            compaction.isDue(records: size, live: liveSize, free: freeSpace, now: MonotonicClock.milliseconds(),
                             forSpace: forSpace, spaceCameBack: spaceCameBack)
        else { return }
        compaction.start(forSpace: forSpace || spaceCameBack)
        let bytes = encodeSnapshot(snapshot())
        let temp = compactPath
        loop.queueWork({ () -> Result<Int32, FileFailure> in
            let fd = open(temp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return .failure(FileFailure(temp)) }
            if let why = JournalFile.writeAll(fd, bytes, at: 0) ?? JournalFile.sync(fd).map({ FileFailure(code: EIO, reason: "sync: \($0)") }) {
                close(fd)
                unlink(temp)
                return .failure(FileFailure(code: why.code, reason: "\(temp): \(why.description)"))
            }
            return .success(fd)
        }) { [self] result in
            let now = MonotonicClock.milliseconds()
            switch result {
            case .failure(let why):
                let running = compaction.phase == .snapshotting
                _ = compaction.snapshotWritten(size: 0, error: why.description, now: now, fullDisk: why.isOutOfSpace)
                if running { compactionFailed(why.description, forSpace: why.isOutOfSpace) }
            case .success(let fd):
                guard compaction.snapshotWritten(size: bytes.count, error: nil, now: now) else {
                    // Given up meanwhile (a failure asked for a rewrite).
                    close(fd)
                    unlink(temp)
                    return
                }
                let failure = JournalFile.writeAll(fd, compaction.tail, at: bytes.count)
                guard compaction.tailAppended(error: failure?.description, now: now, fullDisk: failure?.isOutOfSpace ?? false) else {
                    close(fd)
                    unlink(temp)
                    compactionFailed("\(temp): \(failure?.description ?? "")", forSpace: failure?.isOutOfSpace ?? false)
                    return
                }
                newFD = fd
                liveSize = bytes.count
                runDeferredDiskJob()
            }
        }
    }

    /// While a compaction runs, a group written to the journal goes to the new file too, at
    /// `offset`. Returns false when the group failed (the new file may already be the
    /// journal, ``JournalCompaction/NewFileFailure/failGroup``): it is cut from both files and
    /// reported, and must not be acknowledged.
    func copyToCompactedFile(_ records: [UInt8], at offset: Int) -> Bool {
        guard let why = JournalFile.writeAll(newFD, records, at: offset) else {
            compaction.newFileWritten(count: records.count)
            return true
        }
        _ = ftruncate(newFD, off_t(offset))
        switch compaction.newFileWriteFailed(reason: why.description, now: MonotonicClock.milliseconds()) {
        case .abandon:
            closeCompactedFile()
            compactionFailed("cannot write the compacted journal: \(why)")
            return true
        case .failGroup:
            size -= records.count
            let intact = cutBack()
            reportOutage("cannot write the compacted journal: \(why)")
            perform(pipeline.writeFailed(reason: "cannot write the compacted journal: \(why)", fileIntact: intact))
            return false
        }
    }

    /// Syncs the new file, renames it over the journal and syncs the directory, as the one
    /// disk job in flight: a sync queued after it covers the file that is then the journal.
    func finishCompaction() {
        compaction.finishStarted()
        diskBusy = true
        let (newFD, temp, path, dir) = (self.newFD, compactPath, journalPath, directory)
        loop.queueWork({ () -> JournalCompaction.Finish in
            if let why = JournalFile.sync(newFD) { return .notRenamed(reason: "sync: \(why)") }
            guard rename(temp, path) == 0 else { return .notRenamed(reason: JournalFile.reason("rename")) }
            return .renamed(directorySyncError: JournalFile.syncDirectory(dir))
        }) { [self] finish in
            diskBusy = false
            switch compaction.finishEnded(finish, now: MonotonicClock.milliseconds()) {
            case .abandon(let reason):
                closeCompactedFile()
                compactionFailed(reason)
            case .adopt(let size):
                adopt(self.newFD, size: size)
                counted.compactions &+= 1
                self.newFD = -1
                spaceFailureLogged = false
                logger.info("journal: compacted to \(size) bytes")
            case .adoptAfterFailedSync(let size, let reason):
                // The new file is the journal whatever failed after the rename.
                adopt(self.newFD, size: size)
                counted.compactions &+= 1
                self.newFD = -1
                reportOutage(reason)
                perform(pipeline.syncFailed(reason: reason))
            }
            if compaction.takeWaitingRewrite() { startRewrite() }
            runDeferredDiskJob()
        }
    }

    /// Closes and removes the compacted file (not renamed: the journal is the old file).
    func closeCompactedFile() {
        guard newFD >= 0 else { return }
        close(newFD)
        newFD = -1
        unlink(compactPath)
    }

    /// Logs a failed compaction; one that failed for want of space is logged once until a
    /// compaction succeeds (on a full disk one is tried every second).
    func compactionFailed(_ why: String, forSpace: Bool = false) {
        if forSpace {
            guard !spaceFailureLogged else { return }
            spaceFailureLogged = true
        }
        let wait = compaction.notBefore > MonotonicClock.milliseconds() ? compaction.notBefore - MonotonicClock.milliseconds() : 0
        logger.warning("journal: compaction failed (\(why)); trying again in \((wait + 999) / 1000) s\(forSpace ? ", and after each write that fails for want of space" : "")")
    }

    // MARK: - Rewrite after a failure

    /// Writes the whole current state to a fresh journal; until that is synced and in place,
    /// changes are refused. Retried with a growing delay (100 ms to 2 s). A compaction's
    /// finishing job in flight is waited for (it uses the file it may rename).
    func startRewrite() {
        guard !rewriting, let snapshot else { return }
        if compaction.phase != .idle {
            guard compaction.rewriteRequested(now: MonotonicClock.milliseconds()) else { return }
            closeCompactedFile()
            compactionFailed("a failure interrupted compaction")
        }
        rewriting = true
        let bytes = encodeSnapshot(snapshot())
        let (path, temp, dir, lock) = (journalPath, "\(directory)/journal.rewrite", directory, lockFD)
        loop.queueWork({ () -> (Result<Int32, StateEngineError>, Result<Int32, StateEngineError>?, Int?) in
            let result = JournalFile.replace(path, temp: temp, directory: dir, with: bytes)
            guard case .success(let fd) = result else { return (result, nil, nil) }
            // A state dir made again has no lock: this daemon takes it again.
            return (result, lock >= 0 ? JournalFile.relock(lock, dir) : nil, JournalFile.freeBytes(fd))
        }) { [self] (result, relocked, free) in
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
                freeSpace = free
                rewriteBackoff.reset()
                outage = nil
                logger.notice("journal: rewritten with the whole state (\(size) bytes); accepting changes again")
                perform(pipeline.rewriteFinished(error: nil))
            case .failure(let error):
                perform(pipeline.rewriteFinished(error: "\(error)"))
                scheduleRewriteRetry()
            }
        }
    }

    func scheduleRewriteRetry() {
        let timer = retryTimer ?? UV.Timer(loop: loop)
        retryTimer = timer
        timer.start(afterMilliseconds: rewriteBackoff.next()) { [unowned self] in self.startRewrite() }
    }
}
