import PageSyncCore

/// Journals built byte by byte for the recovery tests.
enum JournalBuilder {
    static func saved(_ room: String, page: Int, version: UInt64, epoch: UInt64 = 7, doc: String = "d1") -> SavedRoom {
        SavedRoom(room: room, page: PageNumber(page)!, version: version, by: "ann", doc: doc, epoch: Epoch(epoch))
    }

    static func journal(_ records: [JournalRecord]) -> [UInt8] {
        var bytes: [UInt8] = []
        for r in records { JournalCodec.append(r, to: &bytes) }
        return bytes
    }

    /// `before`, a filler record sized so that `last` starts `lead` bytes before the first page
    /// boundary (4096), then `last`. Returns the bytes and where `last` starts.
    static func straddling(before: [JournalRecord], last: JournalRecord, lead: Int = 40) -> (bytes: [UInt8], lastStart: Int) {
        let head = padded(before, to: JournalTail.pageSize - lead)
        let bytes = head + journal([last])
        precondition(bytes.count > JournalTail.pageSize, "the last record crosses the boundary")
        return (bytes, head.count)
    }

    /// `records`, then a filler record making them exactly `size` bytes.
    static func padded(_ records: [JournalRecord], to size: Int) -> [UInt8] {
        let head = journal(records)
        let empty = journal([.room(saved("filler", page: 1, version: 1, doc: ""))]).count
        precondition(head.count + empty <= size, "the records must leave room for the filler")
        let filler = journal([.room(saved("filler", page: 1, version: 1, doc: String(repeating: "f", count: size - head.count - empty)))])
        precondition(head.count + filler.count == size)
        return head + filler
    }
}
