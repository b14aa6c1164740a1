import Testing
import PageSyncCore

private func saved(_ room: String = "notes", page: Int = 3, version: UInt64 = 17, by: String? = "ann", doc: String = "5f1c3a2b", epoch: UInt64 = 0xABCD) -> SavedRoom {
    SavedRoom(room: room, page: PageNumber(page)!, version: version, by: by, doc: doc, epoch: Epoch(epoch))
}

private func frame(_ bytes: [UInt8], at offset: Int = 0) -> JournalCodec.Frame {
    bytes.withUnsafeBytes { JournalCodec.frame(in: $0, at: offset) }
}

@Suite struct JournalCodecTests {
    @Test(arguments: [
        JournalRecord.room(saved()),
        .room(saved(by: nil, doc: "")),
        .room(saved("x", page: 1, version: 0, epoch: 1)),
        .room(saved("ü-room", page: Int(UInt32.max), version: UInt64.max, by: "名前", epoch: UInt64.max)),
        .opened(bootID: "0b1c4a8e-3f1e-4b7a-9c55-2a7d7f6f0e11"),
        .opened(bootID: ""),
        .closed,
    ])
    func everyRecordRoundTrips(record: JournalRecord) {
        let bytes = JournalCodec.encode(record)
        #expect(frame(bytes) == .record(record, next: bytes.count))
    }

    @Test func checkLocatesARoomRecordsNameAndPayloadWithoutDecodingIt() {
        var bytes: [UInt8] = []
        JournalCodec.append(.opened(bootID: "b"), to: &bytes)
        let second = bytes.count
        JournalCodec.append(.room(saved("ü-room")), to: &bytes)
        bytes.withUnsafeBytes { raw in
            guard case .other(.opened("b"), let next) = JournalCodec.check(in: raw, at: 0) else {
                Issue.record("the opened record is not checked as one")
                return
            }
            #expect(next == second)
            guard case .room(let name, let payload, let end) = JournalCodec.check(in: raw, at: second) else {
                Issue.record("the room record is not checked as one")
                return
            }
            #expect(Array(raw[name]) == Array("ü-room".utf8))
            #expect(payload == (second + JournalCodec.headerSize)..<bytes.count)
            #expect(end == bytes.count)
            #expect(JournalCodec.record(payload: payload, in: raw) == .room(saved("ü-room")))
        }
    }

    @Test func framesFollowEachOther() {
        var bytes: [UInt8] = []
        JournalCodec.append(.opened(bootID: "b"), to: &bytes)
        let second = bytes.count
        JournalCodec.append(.room(saved()), to: &bytes)
        #expect(frame(bytes, at: second) == .record(.room(saved()), next: bytes.count))
    }

    /// An `R` record, and an `F` record (a room with a line and a mark).
    static let records: [JournalRecord] = [
        .room(saved()), .room(SavedRoom(room: "walk", page: PageNumber(3)!, version: 17, by: "ann", doc: "5f1c3a2b", epoch: Epoch(0xABCD),
                                        line: 30, mark: LineRange(first: 30, last: 34))),
    ]

    @Test(arguments: records)
    func everyCutShortFrameIsIncomplete(record: JournalRecord) {
        let bytes = JournalCodec.encode(record)
        for length in 0..<bytes.count {
            #expect(frame(Array(bytes[..<length])) == .incomplete, "cut at \(length)")
        }
    }

    @Test(arguments: records)
    func everyFlippedBitIsCaught(record: JournalRecord) {
        let bytes = JournalCodec.encode(record)
        for i in 0..<bytes.count {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[i] ^= 1 << bit
                let result = frame(damaged)
                // A flipped length bit may also look like a longer, incomplete frame.
                #expect(result == .damaged || (i < 4 && result == .incomplete), "byte \(i) bit \(bit): \(result)")
            }
        }
    }

    @Test func badPayloadsWithGoodChecksumsAreDamage() {
        // A frame whose checksum matches but whose payload is not a record.
        func framed(_ payload: [UInt8]) -> [UInt8] {
            var out: [UInt8] = []
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { out.append(contentsOf: $0) }
            let crc = CRC32C.checksum(payload, continuing: CRC32C.checksum(out))
            withUnsafeBytes(of: crc.littleEndian) { out.append(contentsOf: $0) }
            return out + payload
        }
        #expect(frame(framed([UInt8(ascii: "Z")])) == .damaged, "unknown kind")
        #expect(frame(framed([UInt8(ascii: "C"), 0])) == .damaged, "trailing byte")
        #expect(frame(framed([UInt8(ascii: "O"), 5, 0, 0x61])) == .damaged, "string longer than the payload")
        #expect(frame(framed([UInt8(ascii: "O"), 1, 0, 0xFF])) == .damaged, "invalid UTF-8")
        var room = [UInt8(ascii: "R")] + [UInt8](repeating: 0, count: 16) + [0, 0, 0, 0]  // page 0
        room += [1, 0, 0x61, 0, 0, 0, 0]
        #expect(frame(framed(room)) == .damaged, "page 0")
        func roomPayload(_ strings: [[UInt8]], trailing: [UInt8] = []) -> [UInt8] {
            var p = [UInt8(ascii: "R")] + [UInt8](repeating: 0, count: 16) + [1, 0, 0, 0]
            for s in strings { p += [UInt8(s.count), 0] + s }
            return p + trailing
        }
        #expect(frame(framed(roomPayload([[0x61], [], [0x64]]))) != .damaged, "a well-formed room record (control)")
        #expect(frame(framed(roomPayload([[], [], [0x64]]))) == .damaged, "empty room name")
        #expect(frame(framed(roomPayload([[0x61], [0xC3], [0x64]]))) == .damaged, "invalid UTF-8 in by")
        #expect(frame(framed(roomPayload([[0x61], [], [0xE2, 0x82]]))) == .damaged, "invalid UTF-8 in doc")
        #expect(frame(framed(roomPayload([[0xFF], [], []]))) == .damaged, "invalid UTF-8 in the room name")
        #expect(frame(framed(roomPayload([[0x61], [0xC3, 0xBC], [0x64]]))) != .damaged, "valid non-ASCII UTF-8")
        #expect(frame(framed(roomPayload([[0x61], [], [0x64]], trailing: [0]))) == .damaged, "trailing byte")
        #expect(frame(framed(roomPayload([[0x61], []]))) == .damaged, "a string missing")
        #expect(frame(framed(Array(roomPayload([[0x61], [], []]).prefix(20)))) == .damaged, "cut inside the integers")
        #expect(frame([0, 0, 0, 0, 0, 0, 0, 0]) == .damaged, "empty payload")
        #expect(frame([0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0]) == .damaged, "absurd length")
    }

    /// The bytes on disk, built here from the format's description (not by the encoder), so a
    /// change of encoder that changed the format fails: journals written before must still read.
    @Test func aRoomRecordsBytesAreTheDocumentedFormat() {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        func str(_ s: String) -> [UInt8] { le(UInt16(s.utf8.count)) + Array(s.utf8) }
        let payload = [UInt8(ascii: "R")] + le(UInt64(0xABCD)) + le(UInt64(17)) + le(UInt32(3))
            + str("ü-room") + str("ann") + str("5f1c3a2b")
        let length = le(UInt32(payload.count))
        let expected = length + le(CRC32C.checksum(payload, continuing: CRC32C.checksum(length))) + payload
        #expect(JournalCodec.encode(.room(saved("ü-room"))) == expected)
        #expect(JournalCodec.encode(.closed) == le(UInt32(1)) + le(CRC32C.checksum([UInt8(ascii: "C")], continuing: CRC32C.checksum(le(UInt32(1))))) + [UInt8(ascii: "C")])
        let opened = [UInt8(ascii: "O")] + str("b00t")
        let openedLength = le(UInt32(opened.count))
        #expect(JournalCodec.encode(.opened(bootID: "b00t"))
            == openedLength + le(CRC32C.checksum(opened, continuing: CRC32C.checksum(openedLength))) + opened)
    }

    /// A group's records are encoded in one allocation, and are the records one after another.
    @Test func aGroupIsItsRecordsInOrder() {
        let rooms = [saved("a"), saved("b", by: nil), saved("ü-room", version: UInt64.max, doc: "")]
        var oneByOne: [UInt8] = []
        for room in rooms { JournalCodec.append(.room(room), to: &oneByOne) }
        #expect(JournalCodec.encode(rooms: rooms) == oneByOne)
        #expect(JournalCodec.encode(rooms: []) == [])
    }

    /// A string past 65,535 bytes is cut at the last whole character before the limit.
    @Test func longStringsAreCutBetweenCharacters() {
        let ascii = String(repeating: "a", count: 70_000)
        let euro = String(repeating: "€", count: 30_000)  // 3 bytes each: 65,535 is a boundary, cut one before it
        let cases = [
            (ascii, 65_535), (euro, 65_532), (String(repeating: "a", count: 65_534), 65_534),
            // 65,536 bytes, the limit inside the last character: cut before it.
            (String(repeating: "a", count: 65_533) + "€", 65_533),
            // Exactly 65,535 bytes: cut too, and the last whole character goes (the format's rule).
            (String(repeating: "a", count: 65_532) + "€", 65_532),
        ]
        for (doc, kept) in cases {
            let bytes = JournalCodec.encode(.room(saved(doc: doc)))
            guard case .record(.room(let back), let next) = frame(bytes) else {
                Issue.record("a record with a \(doc.utf8.count)-byte doc does not read back")
                continue
            }
            #expect(next == bytes.count)
            #expect(back.doc.utf8.count == kept)
            #expect(doc.utf8.starts(with: back.doc.utf8))
        }
    }
}
