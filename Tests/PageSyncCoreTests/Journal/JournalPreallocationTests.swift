import Testing
import PageSyncCore

private func saved(_ room: String, page: Int, version: UInt64) -> SavedRoom {
    SavedRoom(room: room, page: PageNumber(page)!, version: version, by: "ann", doc: "d1", epoch: Epoch(7))
}

private func journal(_ records: [JournalRecord]) -> [UInt8] {
    var bytes: [UInt8] = []
    for r in records { JournalCodec.append(r, to: &bytes) }
    return bytes
}

/// The journal's zeros ahead of its records: when to write them, and how recovery reads them.
@Suite struct JournalPreallocationTests {
    let chunk = JournalPreallocation.chunk

    @Test func aWriteThatFitsNeedsNoFill() {
        var p = JournalPreallocation(fileSize: 0)
        p.filled(0..<chunk)
        #expect(p.fill(writing: 100, at: 0) == nil)
        #expect(p.fill(writing: 100, at: chunk - 100) == nil)
    }

    @Test func aWritePastTheEndFillsAChunkBeyondIt() {
        let p = JournalPreallocation(fileSize: 1000)
        #expect(p.fill(writing: 50, at: 1000) == 1000..<(1050 + chunk))
        // Records that end inside the file but run past it: the fill starts at the file's end.
        let q = JournalPreallocation(fileSize: 1000)
        #expect(q.fill(writing: 50, at: 980) == 1000..<(1030 + chunk))
    }

    @Test func afterAFillTheNextChunkOfRecordsFits() {
        var p = JournalPreallocation(fileSize: 0)
        let range = p.fill(writing: 60, at: 0)!
        p.filled(range)
        p.wrote(upTo: 60)
        #expect(p.fileSize == 60 + chunk)
        var end = 60
        while end + 60 <= p.fileSize {
            #expect(p.fill(writing: 60, at: end) == nil)
            end += 60
        }
        #expect(p.fill(writing: 60, at: end) != nil, "past the zeros, the next fill")
    }

    @Test func aFailedFillWaitsAChunkOfAppendedRecords() {
        var p = JournalPreallocation(fileSize: 500)
        #expect(p.fill(writing: 50, at: 500) != nil)
        p.fillFailed(at: 500)
        // Appended instead: the file grows with the records, no fill is asked for meanwhile.
        var end = 500
        while end < 500 + chunk {
            #expect(p.fill(writing: 50, at: end) == nil, "at \(end)")
            p.wrote(upTo: end + 50)
            end += 50
        }
        #expect(p.fileSize == end)
        #expect(p.fill(writing: 50, at: end) == end..<(end + 50 + chunk), "tried again a chunk later")
    }

    @Test func zerosAfterTheLastRecordAreTheEndNotDamage() {
        let records: [JournalRecord] = [.opened(bootID: "boot-1"), .room(saved("a", page: 2, version: 1)), .room(saved("a", page: 3, version: 2))]
        let whole = journal(records)
        for zeros in [1, 7, 8, 9, 4096, chunk] {
            let r = JournalRecovery(scanning: whole + [UInt8](repeating: 0, count: zeros))
            #expect(r.damage.isEmpty, "\(zeros) zero(s)")
            #expect(r.validLength == whole.count)
            #expect(r.rooms["a"] == saved("a", page: 3, version: 2))
            #expect(r.recordCount == JournalRecovery(scanning: whole).recordCount)
        }
    }

    @Test func aRecordCutShortBeforeTheZerosIsATornWriteOnlyAtAPageBoundary() {
        // A crash stops a write at a page boundary: the record's first bytes reached the file up
        // to it, the rest is still the zeros written ahead. A record cut anywhere else is damage
        // (JournalDamageTests has the rule in full).
        let records: [JournalRecord] = [.opened(bootID: "boot-1"), .room(saved("a", page: 2, version: 1)), .room(saved("a", page: 3, version: 2))]
        let whole = journal(records)
        let lastStart = journal(Array(records.dropLast())).count
        let fileSize = whole.count + 1000
        for cut in lastStart + 1..<whole.count {
            let bytes = Array(whole[..<cut]) + [UInt8](repeating: 0, count: fileSize - cut)
            let r = JournalRecovery(scanning: bytes)
            #expect(r.damage == [.damagedTail(offset: lastStart, droppedBytes: fileSize - lastStart)], "cut at \(cut)")
            #expect(r.rooms["a"] == saved("a", page: 2, version: 1))
        }
        let (straddling, start) = JournalBuilder.straddling(before: records, last: .room(saved("a", page: 4, version: 3)))
        let cut = Array(straddling[..<JournalTail.pageSize]) + [UInt8](repeating: 0, count: chunk)
        #expect(JournalRecovery(scanning: cut).damage == [.tornWrite(offset: start, droppedBytes: cut.count - start)])
    }

    @Test func zerosAheadAreSizedToTheFreeSpace() {
        #expect(JournalPreallocation.ahead(free: nil) == chunk)
        #expect(JournalPreallocation.ahead(free: 100 << 20) == chunk)
        #expect(JournalPreallocation.ahead(free: 200 << 10) == 48 << 10, "a quarter, in whole pages")
        #expect(JournalPreallocation.ahead(free: 16_383) == 0, "less than a page: none")
        #expect(JournalPreallocation.ahead(free: -5) == 0)
        let p = JournalPreallocation(fileSize: 1000)
        #expect(p.fill(writing: 50, at: 1000, free: 64 << 10) == 1000..<(1050 + (16 << 10)))
        #expect(p.fill(writing: 50, at: 1000, free: 8 << 10) == nil, "no room for zeros: the records are appended")
    }

    @Test func zerosWithARecordAfterThemAreLostRecords() {
        // A record after zeros: something between was lost, which a zero tail never explains.
        let first = journal([.opened(bootID: "boot-1"), .room(saved("a", page: 2, version: 1))])
        let later = journal([.room(saved("a", page: 3, version: 2))])
        let r = JournalRecovery(scanning: first + [UInt8](repeating: 0, count: 100) + later)
        #expect(r.damage == [.lostRecords(offset: first.count, skippedBytes: 100)])
        #expect(r.rooms["a"] == saved("a", page: 3, version: 2))
        #expect(r.newEpochReason(currentBootID: "boot-1") != nil)
    }
}
