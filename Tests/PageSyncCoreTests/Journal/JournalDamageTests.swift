import Testing
import PageSyncCore

/// Recovery's damage rules on journals built byte by byte: a write a crash cut short keeps
/// the epoch; anything that may drop or change an acknowledged record starts a new one.
@Suite struct JournalDamageTests {
    typealias B = JournalBuilder
    let before: [JournalRecord] = [
        .opened(bootID: "boot-1"),
        .room(B.saved("a", page: 1, version: 0)),
        .room(B.saved("a", page: 2, version: 1)),
    ]
    let last = JournalRecord.room(B.saved("a", page: 3, version: 2, doc: "c7025a42c4e4"))
    /// A record long enough to start 80 bytes before a page boundary and end well after it.
    let long = JournalRecord.room(B.saved("a", page: 3, version: 2, doc: String(repeating: "c", count: 100)))
    let page = JournalTail.pageSize

    // MARK: - Torn writes: cut at a page boundary on an unclean stop

    @Test func aWriteCutAtAPageBoundaryIsTornAndKeepsTheEpoch() {
        for lead in [1, 4, 7, 8, 9, 30, 45] {  // the cut inside the header, at its end, in the payload
            let (bytes, lastStart) = B.straddling(before: before, last: last, lead: lead)
            // Appended past the end (the file ends at the boundary), or into zeros written ahead.
            for zeros in [0, 1, 500, page] {
                let file = Array(bytes[..<page]) + [UInt8](repeating: 0, count: zeros)
                let r = JournalRecovery(scanning: file)
                #expect(r.damage == [.tornWrite(offset: lastStart, droppedBytes: file.count - lastStart)], "lead \(lead), \(zeros) zeros")
                #expect(r.validLength == lastStart)
                #expect(r.rooms["a"] == B.saved("a", page: 2, version: 1))
                #expect(r.newEpochReason(currentBootID: "boot-1") == nil, "never acknowledged: the epoch stays")
            }
        }
    }

    @Test func aTornGroupKeepsItsWholeRecordsBeforeTheCut() {
        // A group of several records, cut at the boundary inside its third record.
        let group: [JournalRecord] = (0..<3).map { .room(B.saved("r\($0)", page: 2, version: 9, doc: String(repeating: "x", count: 30))) }
        let head = B.padded(before, to: page - 200)
        let start = head.count
        let bytes = head + B.journal(group)
        let r = JournalRecovery(scanning: Array(bytes[..<page]))
        let third = start + B.journal(Array(group.prefix(2))).count
        #expect(third < page && third + B.journal([group[2]]).count > page)
        #expect(r.damage == [.tornWrite(offset: third, droppedBytes: page - third)])
        #expect(r.rooms["r0"] != nil && r.rooms["r1"] != nil && r.rooms["r2"] == nil)
    }

    @Test func aCutAtAPageBoundaryAfterACleanStopIsDamage() {
        // A clean stop cuts the file to whole records: nothing may follow the stop record.
        let (bytes, lastStart) = B.straddling(before: before + [.closed], last: last)
        let r = JournalRecovery(scanning: Array(bytes[..<page]))
        #expect(r.damage == [.damagedTail(offset: lastStart, droppedBytes: page - lastStart)])
        #expect(r.newEpochReason(currentBootID: "boot-1") != nil)
    }

    @Test func aCutNotOnABoundaryIsDamageWhereverItFalls() {
        let (bytes, lastStart) = B.straddling(before: before, last: long, lead: 80)
        for cut in lastStart + 1..<bytes.count where cut != page {
            // The file ends there, or zeros follow (a record's end zeroed: the zeros before
            // the boundary are more than a record's own).
            for zeros in [0, 300] where zeros == 0 || cut <= page - JournalTail.longestZeroRun || cut > page {
                let r = JournalRecovery(scanning: Array(bytes[..<cut]) + [UInt8](repeating: 0, count: zeros))
                #expect(r.damage == [.damagedTail(offset: lastStart, droppedBytes: cut + zeros - lastStart)], "cut at \(cut), \(zeros) zeros")
            }
        }
    }

    // MARK: - Damage in whole records

    @Test func everyBitFlipInTheLastWholeRecordIsDamage() {
        let bytes = B.journal(before + [last])
        let lastStart = B.journal(before).count
        for zeros in [0, 64, page] {
            for index in lastStart..<bytes.count {
                for bit in 0..<8 {
                    var file = bytes + [UInt8](repeating: 0, count: zeros)
                    file[index] ^= UInt8(1 << bit)
                    let r = JournalRecovery(scanning: file)
                    #expect(r.newEpochReason(currentBootID: "boot-1") != nil, "byte \(index - lastStart) bit \(bit), \(zeros) zeros")
                    #expect(r.rooms["a"] == B.saved("a", page: 2, version: 1), "byte \(index - lastStart) bit \(bit)")
                }
            }
        }
    }

    @Test func aFlippedLengthReachingPastAPageBoundaryIsStillDamage() {
        // The record is whole: its own fields give its length, and the checksum agrees with
        // that length, so the longer length in its header is damage, not a cut.
        let bytes = B.journal(before + [last])
        let lastStart = B.journal(before).count
        for bit in 8..<17 {
            var file = bytes + [UInt8](repeating: 0, count: 2 * page)
            file[lastStart + bit / 8] ^= UInt8(1 << (bit % 8))
            let r = JournalRecovery(scanning: file)
            #expect(r.damage == [.damagedTail(offset: lastStart, droppedBytes: file.count - lastStart)], "bit \(bit)")
        }
    }

    @Test func aWholeRecordWithABadChecksumInTheMiddleOfAPageIsDamage() {
        var bytes = B.journal(before + [last])
        bytes[bytes.count - 1] ^= 0x01
        #expect(JournalRecovery(scanning: bytes).damage == [.damagedTail(offset: B.journal(before).count, droppedBytes: B.journal([last]).count)])
    }

    // MARK: - Versions and emptiness

    @Test func aVersionGoingBackWithinAnEpochIsDamage() {
        let bytes = B.journal(before + [.room(B.saved("a", page: 5, version: 9)), .room(B.saved("a", page: 3, version: 4))])
        let r = JournalRecovery(scanning: bytes)
        let at = B.journal(before + [.room(B.saved("a", page: 5, version: 9))]).count
        #expect(r.damage == [.versionWentBack(room: "a", offset: at, from: 9, to: 4)])
        #expect(r.newEpochReason(currentBootID: "boot-1") == "a room's version goes back in the journal")
        let start = r.start(currentBootID: "boot-1", newEpoch: Epoch(99))
        #expect(start.rewrite && start.rooms["a"]?.epoch == Epoch(99))
    }

    @Test func aLowerVersionInAnotherEpochAndAnEqualVersionAreNotDamage() {
        // A room at its last version starts a new epoch at version 0 (RoomRestore).
        let bytes = B.journal(before + [.room(B.saved("a", page: 1, version: 0, epoch: 8)), .room(B.saved("b", page: 1, version: 0))])
        let r = JournalRecovery(scanning: bytes)
        #expect(r.damage.isEmpty && r.rooms["a"]?.epoch == Epoch(8))
    }

    @Test func aJournalThatExistedAndHoldsNothingIsDamage() {
        for bytes in [[UInt8](), [UInt8](repeating: 0, count: 4096)] {
            let existed = JournalRecovery(scanning: bytes, existed: true)
            #expect(existed.damage == [.emptied])
            #expect(existed.newEpochReason(currentBootID: "boot-1") == "the journal holds no record")
            let created = JournalRecovery(scanning: bytes, existed: false)
            #expect(created.damage.isEmpty && created.newEpochReason(currentBootID: "boot-1") == nil, "a new journal is simply new")
        }
        #expect(JournalRecovery(scanning: B.journal([.opened(bootID: "b")]), existed: true).damage.isEmpty)
    }

    // MARK: - The rule alone

    @Test func theCutRuleLooksAtTheLastNonZeroByteAndTheBoundaryAfterIt() {
        let (bytes, lastStart) = B.straddling(before: before, last: long, lead: 80)
        #expect(JournalTail.isCutByCrash(Array(bytes[..<page]), at: lastStart))
        #expect(!JournalTail.isCutByCrash(Array(bytes[..<page]), at: lastStart, closedCleanly: true))
        #expect(!JournalTail.isCutByCrash(Array(bytes[..<(page - 1)]), at: lastStart), "the file ends inside a page")
        #expect(!JournalTail.isCutByCrash(Array(bytes[..<(page + 1)]), at: lastStart))
        // Garbage after the boundary: the last non-zero byte is past it.
        var garbage = Array(bytes[..<page]) + [UInt8](repeating: 0, count: 100)
        garbage[page + 50] = 1
        #expect(!JournalTail.isCutByCrash(garbage, at: lastStart))
        // The record's last bytes before the boundary zeroed: more zeros than a record holds.
        var zeroed = Array(bytes[..<page])
        for i in (page - JournalTail.longestZeroRun)..<page { zeroed[i] = 0 }
        #expect(!JournalTail.isCutByCrash(zeroed, at: lastStart))
        zeroed[page - JournalTail.longestZeroRun] = 7
        #expect(JournalTail.isCutByCrash(zeroed, at: lastStart))
    }
}
