/// What a journal holds, read back at start: the rules of recovery, without I/O.
public struct JournalRecovery: Equatable, Sendable {
    /// What recovery dropped or found wrong, and whether the rooms keep their epoch.
    ///
    /// Only ``tornWrite`` keeps it: every other case may have dropped or changed a record
    /// somebody was told of (PROTOCOL.md, "Saving and epochs", lists the same cases).
    public enum Damage: Equatable, Sendable {
        /// The last frame is a write a crash cut short (``JournalTail``): it never returned,
        /// so nothing in it was acknowledged. The bytes from `offset` on are dropped; the
        /// rooms keep their epoch.
        case tornWrite(offset: Int, droppedBytes: Int)
        /// The last frame is damaged: a whole frame whose checksum fails, a length no frame
        /// has, a file cut where no crash cuts one, or bytes after a clean stop. It may have
        /// been acknowledged: the bytes from `offset` on are dropped and every room starts a
        /// new epoch.
        case damagedTail(offset: Int, droppedBytes: Int)
        /// A damaged stretch with valid records after it: records in the middle are lost, so
        /// the daemon cannot prove it holds the last acknowledged state.
        case lostRecords(offset: Int, skippedBytes: Int)
        /// A valid record at `offset` gives `room` a lower version than its record before, in
        /// the same epoch: versions never go back within an epoch, so this is damage.
        case versionWentBack(room: String, offset: Int, from: UInt64, to: UInt64)
        /// The journal file existed but held no record (emptied, or cut to nothing): whatever
        /// it held is gone.
        case emptied
    }

    /// Each room's last saved state.
    public var rooms: [String: SavedRoom] = [:]
    /// How many bytes of the file hold valid records before any dropped tail; the file is
    /// cut to this length before new records are appended.
    public var validLength = 0
    /// Every damage found, in file order.
    public var damage: [Damage] = []
    /// The boot id of the last daemon that opened the journal, if any did.
    public var lastBootID: String?
    /// Whether that daemon stopped cleanly (a `closed` record follows its `opened` one).
    public var closedCleanly = false
    /// Valid records read.
    public var recordCount = 0

    /// An empty recovery (no journal).
    public init() {}

    /// Reads every record of `bytes`. `existed`: the file was there before this start (a
    /// journal that existed and holds no record is ``Damage/emptied``; one just created is
    /// simply new).
    ///
    /// Zero bytes from a frame's start to the end are the journal's unused, zero-filled
    /// space, not damage. A damaged frame is skipped by looking for the next offset where a
    /// valid frame starts; if one exists, records were lost in the middle, otherwise the end
    /// is a write cut short or damage (``JournalTail``).
    ///
    /// Every frame is checked in full, but a room record is only located, not decoded:
    /// rooms are keyed by their name's bytes, and only each room's last record becomes a
    /// ``SavedRoom`` at the end. A journal of a million changes to a few hundred rooms is
    /// read without a million strings.
    public init(scanning bytes: UnsafeRawBufferPointer, existed: Bool = false) {
        var last: [NameKey: LastRecord] = [:]
        defer {
            for record in last.values {
                if case .room(let saved)? = JournalCodec.record(payload: record.payload, in: bytes) {
                    rooms[saved.room] = saved
                }
            }
            if existed && recordCount == 0 { damage.append(.emptied) }
        }
        var offset = 0
        while offset < bytes.count {
            switch JournalCodec.check(in: bytes, at: offset) {
            case .room(let name, let payload, let next):
                recordCount += 1
                let (epoch, version) = JournalCodec.roomVersion(payload: payload, in: bytes)
                let key = NameKey(UnsafeRawBufferPointer(rebasing: bytes[name]))
                if let before = last[key], before.epoch == epoch, version < before.version {
                    let room = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[name]), as: UTF8.self)
                    damage.append(.versionWentBack(room: room, offset: offset, from: before.version, to: version))
                }
                last[key] = LastRecord(payload: payload, epoch: epoch, version: version)
                offset = next
                validLength = next
            case .other(let record, let next):
                apply(record)
                offset = next
                validLength = next
            case .incomplete, .damaged:
                // Space the engine filled with zeros ahead of its records
                // (``JournalPreallocation``): the journal ends here, undamaged. No frame starts
                // with a zero length, and a torn record leaves bytes that are not all zero.
                if Self.isZero(bytes, from: offset) { return }
                if let resume = Self.nextValidFrame(in: bytes, after: offset) {
                    damage.append(.lostRecords(offset: offset, skippedBytes: resume - offset))
                    offset = resume
                } else if JournalTail.isCutByCrash(bytes, at: offset, closedCleanly: closedCleanly) {
                    damage.append(.tornWrite(offset: offset, droppedBytes: bytes.count - offset))
                    return
                } else {
                    damage.append(.damagedTail(offset: offset, droppedBytes: bytes.count - offset))
                    return
                }
            }
        }
    }

    /// A room's last record seen so far in the scan.
    private struct LastRecord {
        var payload: Range<Int>
        var epoch: UInt64
        var version: UInt64
    }

    /// A room name's bytes inside the journal being scanned, as a dictionary key (valid only
    /// while the scan runs: it points into the journal's buffer).
    private struct NameKey: Hashable {
        let bytes: UnsafeRawBufferPointer

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        static func == (a: NameKey, b: NameKey) -> Bool {
            a.bytes.count == b.bytes.count && memcmpEqual(a.bytes, b.bytes)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes: bytes)
        }

        private static func memcmpEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            for i in 0..<a.count where a[i] != b[i] { return false }
            return true
        }
    }

    /// Reads every record of `bytes`.
    public init(scanning bytes: [UInt8], existed: Bool = false) {
        self = bytes.withUnsafeBytes { JournalRecovery(scanning: $0, existed: existed) }
    }

    /// Whether records were lost in the middle of the journal.
    public var lostRecords: Bool {
        damage.contains { if case .lostRecords = $0 { true } else { false } }
    }

    /// Why every room needs a new epoch, or nil when the journal proves it holds the last
    /// acknowledged state. Any damage but a write cut short by a crash (``Damage/tornWrite``)
    /// gives one; so does an unclean stop followed by a reboot (the page cache, and so the last
    /// unsynced writes, did not survive). A crash of the process alone keeps the epoch: the
    /// page cache survived it.
    public func newEpochReason(currentBootID: String?) -> String? {
        for found in damage {
            switch found {
            case .tornWrite: continue
            case .damagedTail: return "the journal's last record is damaged"
            case .lostRecords: return "records were lost in the middle of the journal"
            case .versionWentBack: return "a room's version goes back in the journal"
            case .emptied: return "the journal holds no record"
            }
        }
        if let last = lastBootID, !closedCleanly, let current = currentBootID, last != current {
            return "the daemon did not stop cleanly and the machine rebooted since"
        }
        return nil
    }

    /// What the journal engine starts from, once the journal is read.
    public struct Start: Equatable, Sendable {
        /// Each room's state to serve: as saved, or moved to the new epoch.
        public var rooms: [String: SavedRoom]
        /// Why every room was moved to a new epoch, or nil when the journal can be trusted.
        public var newEpochReason: String?
        /// Whether the journal must be replaced by one holding ``rooms`` before anything else
        /// is written to it: to drop a damaged stretch, and to record a new epoch.
        public var rewrite: Bool
    }

    /// The rooms to start from. When ``newEpochReason(currentBootID:)`` gives a reason, every
    /// room saved in the journal (served or not) moves to `newEpoch`, keeping its page and
    /// version, and the journal must be rewritten with them at once: the reason lives only in
    /// the old journal (its damage, or its last boot marker), and the first record written
    /// after it (this boot's marker) erases it. A start that then failed, or a daemon killed
    /// before its rooms' new states were written, would otherwise serve the old epoch again,
    /// reusing versions that were lost.
    public func start(currentBootID: String?, newEpoch: Epoch) -> Start {
        guard let reason = newEpochReason(currentBootID: currentBootID) else {
            return Start(rooms: rooms, newEpochReason: nil, rewrite: false)
        }
        var moved = rooms
        for name in moved.keys { moved[name]?.epoch = newEpoch }
        return Start(rooms: moved, newEpochReason: reason, rewrite: true)
    }

    private mutating func apply(_ record: JournalRecord) {
        recordCount += 1
        switch record {
        case .room(let saved):
            rooms[saved.room] = saved
        case .opened(let bootID):
            lastBootID = bootID
            closedCleanly = false
        case .closed:
            closedCleanly = true
        }
    }

    /// Whether every byte from `offset` to the end is zero.
    private static func isZero(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Bool {
        var any: UInt8 = 0
        for byte in UnsafeRawBufferPointer(rebasing: bytes[offset...]) { any |= byte }
        return any == 0
    }

    /// The first offset after `offset` where a whole valid frame starts.
    private static func nextValidFrame(in bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + JournalCodec.headerSize < bytes.count {
            if case .record = JournalCodec.frame(in: bytes, at: candidate) { return candidate }
            candidate += 1
        }
        return nil
    }
}
