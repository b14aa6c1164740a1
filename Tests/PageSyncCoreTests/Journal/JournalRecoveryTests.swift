import Testing
import PageSyncCore

private func saved(_ room: String, page: Int, version: UInt64, epoch: UInt64 = 7) -> SavedRoom {
    SavedRoom(room: room, page: PageNumber(page)!, version: version, by: "ann", doc: "d1", epoch: Epoch(epoch))
}

private func journal(_ records: [JournalRecord]) -> [UInt8] {
    var bytes: [UInt8] = []
    for r in records { JournalCodec.append(r, to: &bytes) }
    return bytes
}

@Suite struct JournalRecoveryTests {
    let records: [JournalRecord] = [
        .opened(bootID: "boot-1"),
        .room(saved("a", page: 1, version: 0)),
        .room(saved("b", page: 2, version: 5)),
        .room(saved("a", page: 2, version: 1)),
        .room(saved("a", page: 3, version: 2)),
    ]

    @Test func anEmptyJournalHoldsNothing() {
        let r = JournalRecovery(scanning: [UInt8]())
        #expect(r.rooms.isEmpty && r.damage.isEmpty && r.validLength == 0 && r.lastBootID == nil)
        #expect(r.newEpochReason(currentBootID: "boot-1") == nil)
    }

    @Test func theLastRecordOfEachRoomWins() {
        let bytes = journal(records)
        let r = JournalRecovery(scanning: bytes)
        #expect(r.rooms == ["a": saved("a", page: 3, version: 2), "b": saved("b", page: 2, version: 5)])
        #expect(r.validLength == bytes.count && r.damage.isEmpty && r.recordCount == 5)
        #expect(r.lastBootID == "boot-1" && !r.closedCleanly)
    }

    @Test func aCutAnywhereButAPageBoundaryIsDamageAndStartsANewEpoch() {
        // A crash cuts a write only at a page boundary: a cut elsewhere is the file's damage,
        // and the dropped record may have been acknowledged.
        let whole = journal(records)
        let lastStart = journal(Array(records.dropLast())).count
        for cut in lastStart + 1..<whole.count {
            for zerosAfter in [0, 100] {
                let r = JournalRecovery(scanning: Array(whole[..<cut]) + [UInt8](repeating: 0, count: zerosAfter))
                #expect(r.damage == [.damagedTail(offset: lastStart, droppedBytes: cut + zerosAfter - lastStart)], "cut at \(cut)")
                #expect(r.validLength == lastStart)
                #expect(r.rooms["a"] == saved("a", page: 2, version: 1), "the version before, never an invented one")
                #expect(r.newEpochReason(currentBootID: "boot-1") == "the journal's last record is damaged")
            }
        }
    }

    @Test func strayBytesAfterTheLastRecordAreDamage() {
        // 37 stray bytes appended to a state file once gave a nonsense version: now they are
        // dropped, and since nothing says what they were, the rooms start a new epoch.
        let bytes = journal(records) + Array("pad=-------------------------------\n".utf8)
        let r = JournalRecovery(scanning: bytes)
        #expect(r.rooms["a"]?.version == 2)
        #expect(r.damage == [.damagedTail(offset: journal(records).count, droppedBytes: 36)])
        #expect(r.newEpochReason(currentBootID: "boot-1") != nil)
    }

    @Test func aCorruptRecordInTheMiddleIsLostRecordsAndLaterOnesAreKept() {
        var bytes = journal(records)
        let third = journal(Array(records.prefix(3))).count
        bytes[third + 10] ^= 0x40  // inside the fourth record
        let r = JournalRecovery(scanning: bytes)
        #expect(r.lostRecords)
        #expect(r.rooms["a"] == saved("a", page: 3, version: 2), "records after the damage still count")
        #expect(r.validLength == bytes.count)
        #expect(r.newEpochReason(currentBootID: "boot-1") == "records were lost in the middle of the journal")
    }

    @Test func anUncleanStopFollowedByARebootNeedsANewEpoch() {
        let r = JournalRecovery(scanning: journal(records))
        #expect(r.newEpochReason(currentBootID: "boot-1") == nil, "same boot: the page cache survived the crash")
        #expect(r.newEpochReason(currentBootID: "boot-2") == "the daemon did not stop cleanly and the machine rebooted since")
        #expect(r.newEpochReason(currentBootID: nil) == nil, "boot id unknown: nothing to compare")
    }

    @Test func aCleanStopKeepsTheEpochAcrossAReboot() {
        let r = JournalRecovery(scanning: journal(records + [.closed]))
        #expect(r.closedCleanly)
        #expect(r.newEpochReason(currentBootID: "boot-2") == nil)
        // A later run that opened the journal again and crashed counts as unclean.
        let later = JournalRecovery(scanning: journal(records + [.closed, .opened(bootID: "boot-2")]))
        #expect(!later.closedCleanly && later.lastBootID == "boot-2")
        #expect(later.newEpochReason(currentBootID: "boot-3") != nil)
    }

    @Test func aTrustedJournalStartsAsSavedWithoutARewrite() {
        let (bytes, lastStart) = JournalBuilder.straddling(before: records, last: .room(saved("a", page: 4, version: 3)))
        let r = JournalRecovery(scanning: Array(bytes[..<JournalTail.pageSize]))
        #expect(r.damage == [.tornWrite(offset: lastStart, droppedBytes: JournalTail.pageSize - lastStart)])
        let start = r.start(currentBootID: "boot-1", newEpoch: Epoch(99))
        #expect(start.rooms == r.rooms && start.newEpochReason == nil && !start.rewrite, "a write cut by the crash keeps the epoch")
    }

    @Test func aNewEpochIsInEveryRoomAndTheJournalIsRewrittenWithIt() {
        let reboot = JournalRecovery(scanning: journal(records)).start(currentBootID: "boot-2", newEpoch: Epoch(99))
        #expect(reboot.rooms == ["a": saved("a", page: 3, version: 2, epoch: 99), "b": saved("b", page: 2, version: 5, epoch: 99)])
        #expect(reboot.newEpochReason != nil && reboot.rewrite)
        var damaged = journal(records)
        damaged[journal(Array(records.prefix(3))).count + 10] ^= 0x40
        let lost = JournalRecovery(scanning: damaged).start(currentBootID: "boot-1", newEpoch: Epoch(99))
        #expect(lost.rooms.values.allSatisfy { $0.epoch == Epoch(99) } && lost.rewrite)
    }

    @Test func aNewEpochOutlivesTheBootMarkerThatErasesItsReason() {
        // The reason for a new epoch is the old journal's last boot marker: this boot's marker,
        // the first record written after start, erases it. Written as the old journal and the
        // marker, a start that failed after that kept the old epoch; the rewrite keeps the new one.
        let old = journal(records)
        let start = JournalRecovery(scanning: old).start(currentBootID: "boot-2", newEpoch: Epoch(99))
        let forgotten = JournalRecovery(scanning: old + journal([.opened(bootID: "boot-2")]))
        #expect(forgotten.newEpochReason(currentBootID: "boot-2") == nil, "the marker alone erases the reason")
        var rewritten = JournalCodec.encode(rooms: Array(start.rooms.values))
        JournalCodec.append(.opened(bootID: "boot-2"), to: &rewritten)
        let next = JournalRecovery(scanning: rewritten).start(currentBootID: "boot-2", newEpoch: Epoch(100))
        #expect(next.newEpochReason == nil && !next.rewrite)
        #expect(next.rooms == start.rooms, "the next start serves the epoch this one decided")
    }

    @Test func aHundredThousandRecordsAreRead() {
        // (Recovery time of a million records is a benchmark figure: BENCHMARKS.md.)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(6_000_000)
        for i in 0..<100_000 {
            JournalCodec.append(.room(saved("room-\(i % 100)", page: 1 + i % 9, version: UInt64(i))), to: &bytes)
        }
        let r = JournalRecovery(scanning: bytes)
        #expect(r.recordCount == 100_000 && r.rooms.count == 100 && r.damage.isEmpty)
        #expect(r.rooms["room-99"]?.version == 99_999)
    }
}

@Suite struct RoomRestoreTests {
    let fresh = Epoch(0xF00D)

    @Test func aRoomNeverSavedStartsOnPageOneInAFreshEpochAndIsSaved() {
        let o = RoomRestore.restore(saved: nil, pageCount: 6, doc: "d1", freshEpoch: fresh)
        #expect(o.state == RoomState(page: .first, pageCount: 6, version: 0, by: nil, doc: "d1", epoch: fresh))
        #expect(o.needsSave)
    }

    @Test func aSavedRoomComesBackAsItWas() {
        let o = RoomRestore.restore(saved: saved("a", page: 3, version: 9), pageCount: 6, doc: "d1", freshEpoch: fresh)
        #expect(o.state == RoomState(page: PageNumber(3)!, pageCount: 6, version: 9, by: "ann", doc: "d1", epoch: Epoch(7)))
        #expect(!o.needsSave)
    }

    @Test func aChangedDocumentOrAVanishedPageIsAChange() {
        let edited = RoomRestore.restore(saved: saved("a", page: 3, version: 9), pageCount: 6, doc: "d2", freshEpoch: fresh)
        #expect(edited.state.version == 10 && edited.state.doc == "d2" && edited.needsSave)
        let shrunk = RoomRestore.restore(saved: saved("a", page: 5, version: 9), pageCount: 2, doc: "d1", freshEpoch: fresh)
        #expect(shrunk.state.page == PageNumber(2)! && shrunk.state.version == 10 && shrunk.needsSave)
    }

    @Test func aChangeAtTheLastVersionStartsANewEpochInsteadOfReusingIt() {
        let o = RoomRestore.restore(saved: saved("a", page: 3, version: .max), pageCount: 6, doc: "d2", freshEpoch: fresh)
        #expect(o.state.version == 0 && o.state.epoch == fresh && o.needsSave)
        let same = RoomRestore.restore(saved: saved("a", page: 3, version: .max), pageCount: 6, doc: "d1", freshEpoch: fresh)
        #expect(same.state.version == .max && same.state.epoch == Epoch(7) && !same.needsSave)
    }
}
