/// What a journal holds, read back at start: the rules of recovery, without I/O.
public struct JournalRecovery: Equatable, Sendable {
    /// How a journal was damaged.
    public enum Damage: Equatable, Sendable {
        /// The last record was cut short or fails its checksum, and nothing valid follows:
        /// a write interrupted by a crash. The bytes from `offset` on are dropped; no
        /// acknowledged change is lost by that in `always` mode, and at most the changes
        /// of the last moments in `batch` mode after a power loss (which the epoch covers).
        case tornTail(offset: Int, droppedBytes: Int)
        /// A damaged stretch with valid records after it: records in the middle are lost,
        /// so the daemon cannot prove it holds the last acknowledged state.
        case lostRecords(offset: Int, skippedBytes: Int)
    }

    /// Each room's last saved state.
    public var rooms: [String: SavedRoom] = [:]
    /// How many bytes of the file hold valid records before any torn tail; the file is
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

    /// Reads every record of `bytes`. Zero bytes from a frame's start to the end are the
    /// journal's unused, zero-filled space, not damage. A damaged frame is skipped by looking
    /// for the next offset where a valid frame starts; if one exists, records were lost in
    /// the middle, otherwise the tail was torn.
    ///
    /// Every frame is checked in full, but a room record is only located, not decoded:
    /// rooms are keyed by their name's bytes, and only each room's last record becomes a
    /// ``SavedRoom`` at the end. A journal of a million changes to a few hundred rooms is
    /// read without a million strings.
    public init(scanning bytes: UnsafeRawBufferPointer) {
        var lastPayload: [NameKey: Range<Int>] = [:]
        defer {
            for payload in lastPayload.values {
                if case .room(let saved)? = JournalCodec.record(payload: payload, in: bytes) {
                    rooms[saved.room] = saved
                }
            }
        }
        var offset = 0
        while offset < bytes.count {
            switch JournalCodec.check(in: bytes, at: offset) {
            case .room(let name, let payload, let next):
                recordCount += 1
                lastPayload[NameKey(UnsafeRawBufferPointer(rebasing: bytes[name]))] = payload
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
                } else {
                    damage.append(.tornTail(offset: offset, droppedBytes: bytes.count - offset))
                    return
                }
            }
        }
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
    public init(scanning bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { JournalRecovery(scanning: $0) }
    }

    /// Whether records were lost in the middle of the journal.
    public var lostRecords: Bool {
        damage.contains { if case .lostRecords = $0 { true } else { false } }
    }

    /// Why every room needs a new epoch, or nil when the journal proves it holds the last
    /// acknowledged state: records lost in the middle, or an unclean stop followed by a
    /// reboot (the page cache, and so the last unsynced writes, did not survive).
    /// A crash of the process alone keeps the epoch: the page cache survived it.
    public func newEpochReason(currentBootID: String?) -> String? {
        if lostRecords { return "records were lost in the middle of the journal" }
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
            return Start(rooms: rooms, newEpochReason: nil, rewrite: lostRecords)
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

/// The rules for a room's state at start, from what was saved and the document as it is now.
public enum RoomRestore {
    /// A room's starting state, and whether it must be saved before it is served.
    public struct Outcome: Equatable, Sendable {
        /// The state to serve.
        public var state: RoomState
        /// True when the state differs from what was saved (new room, changed
        /// document or clamped page): it is journaled at start, so the epoch survives.
        public var needsSave: Bool
    }

    /// - Parameters:
    ///   - saved: the room's last saved state, or nil for a room never saved.
    ///   - pageCount: the document's page count now (below 1 counts as 1).
    ///   - doc: the document's content id now.
    ///   - freshEpoch: the epoch for a room never saved.
    ///
    /// A saved room keeps its version; if its document changed or its page no longer
    /// exists, that is a change: the version grows by one. Versions never go back within an
    /// epoch; a change at the last version (2^64−1) starts a new epoch at version 0.
    public static func restore(saved: SavedRoom?, pageCount: Int, doc: String, freshEpoch: Epoch) -> Outcome {
        let count = max(1, pageCount)
        guard let saved else {
            return Outcome(
                state: RoomState(page: .first, pageCount: count, version: 0, by: nil, doc: doc, epoch: freshEpoch),
                needsSave: true)
        }
        let page = PageNumber(clamping: saved.page.number, pageCount: count)
        var state = RoomState(page: page, pageCount: count, version: saved.version, by: saved.by, doc: doc, epoch: saved.epoch)
        var needsSave = false
        if saved.doc != doc || page != saved.page {
            if state.version < UInt64.max {
                state.version += 1
            } else {
                // No version is left in this history: the change starts a new one.
                state.epoch = freshEpoch
                state.version = 0
            }
            needsSave = true
        }
        return Outcome(state: state, needsSave: needsSave)
    }
}
