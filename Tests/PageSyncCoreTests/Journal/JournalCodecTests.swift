import Testing
@testable import PageSyncCore

private func saved(_ room: String = "notes", page: Int = 3, version: UInt64 = 17, by: String? = "ann", doc: String = "5f1c3a2b", epoch: UInt64 = 0xABCD) -> SavedRoom {
    SavedRoom(room: room, page: PageNumber(page)!, version: version, by: by, doc: doc, epoch: Epoch(epoch))
}

private func frame(_ bytes: [UInt8], at offset: Int = 0) -> JournalCodec.Frame {
    bytes.withUnsafeBytes { JournalCodec.frame(in: $0, at: offset) }
}

/// What `check` says, in `frame`'s terms: recovery's fast path must agree with the decoder on
/// every input, record or damage.
private func checked(_ bytes: [UInt8], at offset: Int = 0) -> JournalCodec.Frame {
    bytes.withUnsafeBytes { raw in
        switch JournalCodec.check(in: raw, at: offset) {
        case .room(let name, let payload, let next):
            guard case .room(let saved)? = JournalCodec.record(payload: payload, in: raw),
                Array(raw[name]) == Array(saved.room.utf8)
            else { return .damaged }
            return .record(.room(saved), next: next)
        case .other(let record, let next): return .record(record, next: next)
        case .incomplete: return .incomplete
        case .damaged: return .damaged
        }
    }
}

/// `frame` and `check` give the same answer for `bytes`, and that answer.
private func decoded(_ bytes: [UInt8], at offset: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) -> JournalCodec.Frame {
    let result = frame(bytes, at: offset)
    #expect(checked(bytes, at: offset) == result, "check disagrees with frame", sourceLocation: sourceLocation)
    return result
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
        #expect(decoded(bytes) == .record(record, next: bytes.count))
    }

    @Test func framesFollowEachOther() {
        var bytes: [UInt8] = []
        JournalCodec.append(.opened(bootID: "b"), to: &bytes)
        let second = bytes.count
        JournalCodec.append(.room(saved()), to: &bytes)
        #expect(decoded(bytes, at: second) == .record(.room(saved()), next: bytes.count))
    }

    @Test func everyCutShortFrameIsIncomplete() {
        let bytes = JournalCodec.encode(.room(saved()))
        for length in 0..<bytes.count {
            #expect(decoded(Array(bytes[..<length])) == .incomplete, "cut at \(length)")
        }
    }

    @Test func everyFlippedBitIsCaught() {
        let bytes = JournalCodec.encode(.room(saved()))
        for i in 0..<bytes.count {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[i] ^= 1 << bit
                let result = decoded(damaged)
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
        #expect(decoded(framed([UInt8(ascii: "Z")])) == .damaged, "unknown kind")
        #expect(decoded(framed([UInt8(ascii: "C"), 0])) == .damaged, "trailing byte")
        #expect(decoded(framed([UInt8(ascii: "O"), 5, 0, 0x61])) == .damaged, "string longer than the payload")
        #expect(decoded(framed([UInt8(ascii: "O"), 1, 0, 0xFF])) == .damaged, "invalid UTF-8")
        var room = [UInt8(ascii: "R")] + [UInt8](repeating: 0, count: 16) + [0, 0, 0, 0]  // page 0
        room += [1, 0, 0x61, 0, 0, 0, 0]
        #expect(decoded(framed(room)) == .damaged, "page 0")
        func roomPayload(_ strings: [[UInt8]], trailing: [UInt8] = []) -> [UInt8] {
            var p = [UInt8(ascii: "R")] + [UInt8](repeating: 0, count: 16) + [1, 0, 0, 0]
            for s in strings { p += [UInt8(s.count), 0] + s }
            return p + trailing
        }
        #expect(decoded(framed(roomPayload([[0x61], [], [0x64]]))) != .damaged, "a well-formed room record (control)")
        #expect(decoded(framed(roomPayload([[], [], [0x64]]))) == .damaged, "empty room name")
        #expect(decoded(framed(roomPayload([[0x61], [0xC3], [0x64]]))) == .damaged, "invalid UTF-8 in by")
        #expect(decoded(framed(roomPayload([[0x61], [], [0xE2, 0x82]]))) == .damaged, "invalid UTF-8 in doc")
        #expect(decoded(framed(roomPayload([[0xFF], [], []]))) == .damaged, "invalid UTF-8 in the room name")
        #expect(decoded(framed(roomPayload([[0x61], [0xC3, 0xBC], [0x64]]))) != .damaged, "valid non-ASCII UTF-8")
        #expect(decoded(framed(roomPayload([[0x61], [], [0x64]], trailing: [0]))) == .damaged, "trailing byte")
        #expect(decoded(framed(roomPayload([[0x61], []]))) == .damaged, "a string missing")
        #expect(decoded(framed(Array(roomPayload([[0x61], [], []]).prefix(20)))) == .damaged, "cut inside the integers")
        #expect(decoded([0, 0, 0, 0, 0, 0, 0, 0]) == .damaged, "empty payload")
        #expect(decoded([0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0]) == .damaged, "absurd length")
    }
}
