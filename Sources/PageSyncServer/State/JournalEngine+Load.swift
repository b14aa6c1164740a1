#if canImport(Glibc)
import Glibc
#endif
import Logging
import PageSyncCore
import UV

extension JournalEngine {
    /// Reads the journal back (``JournalRecovery``'s rules), logs what it dropped and why, and
    /// leaves the journal ready for this boot's records: cut to its whole records, or rewritten
    /// when it was damaged or its rooms start a new epoch.
    public func load() throws(StateEngineError) -> LoadedState {
        try JournalFile.makeDirectory(directory)
        if lockFD < 0 { lockFD = try JournalFile.lockDirectory(directory) }
        unlink(compactPath)
        unlink("\(directory)/journal.rewrite")
        let existed = JournalFile.exists(journalPath)
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
        var recovery = JournalRecovery(scanning: bytes, existed: existed)
        let start = recovery.start(currentBootID: bootID, newEpoch: .random())
        var rooms = start.rooms
        for damage in recovery.damage { log(damage, newEpoch: start.newEpochReason != nil) }
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
        // A new journal's directory entry is on the device before anything in it is
        // acknowledged (a rewrite below syncs the directory itself).
        let newFileUnsynced = !existed && !rewrite ? JournalFile.syncDirectory(directory).map { "\(directory): sync: \($0)" } : nil
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
        freeSpace = JournalFile.freeBytes(fd)
        // The boot marker is on the device before anything is acknowledged, so a reboot
        // after an unclean stop is always recognized.
        let opened = JournalCodec.encode(.opened(bootID: bootID))
        if startupRefusal != nil {
            // Nothing is written to a journal that could not be rewritten.
        } else if let why = newFileUnsynced ?? opened.withUnsafeBytes({ writeRecords($0) })?.description ?? JournalFile.sync(fd) {
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

    /// One line per damage found: what was dropped, and whether clients see a new epoch.
    private func log(_ damage: JournalRecovery.Damage, newEpoch: Bool) {
        let epoch = newEpoch ? "clients will see a new epoch" : "rooms keep their epoch"
        switch damage {
        case .tornWrite(let offset, let dropped):
            logger.warning("journal: dropping a write the crash cut short (\(dropped) byte(s) at offset \(offset)); it was never acknowledged, every whole record before it is kept; \(epoch)")
        case .damagedTail(let offset, let dropped):
            logger.error("journal: dropping a damaged last record (\(dropped) byte(s) at offset \(offset)); it may have been acknowledged; \(epoch)")
        case .lostRecords(let offset, let skipped):
            logger.error("journal: \(skipped) damaged byte(s) at offset \(offset) with records after them; records in the middle are lost; \(epoch)")
        case .versionWentBack(let room, let offset, let from, let to):
            logger.error("journal: room \(room) goes back from version \(from) to \(to) at offset \(offset) (damage); \(epoch)")
        case .emptied:
            logger.error("journal: \(journalPath) exists but holds no record; whatever it held is lost; \(epoch)")
        }
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
}
