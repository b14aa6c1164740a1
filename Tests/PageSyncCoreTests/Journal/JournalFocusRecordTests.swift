import Testing
import PageSyncCore

private func saved(_ room: String = "walk", version: UInt64 = 17, line: Int = 1, mark: LineRange? = nil) -> SavedRoom {
    SavedRoom(room: room, page: PageNumber(3)!, version: version, by: "ann", doc: "5f1c3a2b", epoch: Epoch(0xABCD), line: line, mark: mark)
}

private func range(_ a: Int, _ b: Int) -> LineRange { LineRange(first: a, last: b)! }

private func frame(_ bytes: [UInt8], at offset: Int = 0) -> JournalCodec.Frame {
    bytes.withUnsafeBytes { JournalCodec.frame(in: $0, at: offset) }
}

private func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

/// A frame around `payload` with a good checksum.
private func framed(_ payload: [UInt8]) -> [UInt8] {
    let length = le(UInt32(payload.count))
    return length + le(CRC32C.checksum(payload, continuing: CRC32C.checksum(length))) + payload
}

/// An `F` payload built from the format's description, not by the encoder.
private func focusPayload(line: UInt32, first: UInt32, last: UInt32, trailing: [UInt8] = []) -> [UInt8] {
    func str(_ s: String) -> [UInt8] { le(UInt16(s.utf8.count)) + Array(s.utf8) }
    return [UInt8(ascii: "F")] + le(UInt64(0xABCD)) + le(UInt64(17)) + le(UInt32(3)) + str("walk") + str("ann") + str("5f1c3a2b")
        + le(line) + le(first) + le(last) + trailing
}

@Suite("The journal's F record: a room's line and mark")
struct JournalFocusRecordTests {
    @Test("a line, a mark, or both round-trip through an F record", arguments: [
        saved(line: 212), saved(mark: range(3, 9)), saved(line: 40, mark: range(41, 41)),
        saved(version: .max, line: Int(UInt32.max), mark: range(1, Int(UInt32.max))),
    ])
    func roundTrip(room: SavedRoom) {
        let bytes = JournalCodec.encode(.room(room))
        #expect(bytes[JournalCodec.headerSize] == UInt8(ascii: "F"))
        #expect(frame(bytes) == .record(.room(room), next: bytes.count))
        #expect(JournalCodec.encode(rooms: [room, saved("b")]) == bytes + JournalCodec.encode(.room(saved("b"))))
    }

    @Test("line 1 without a mark is still written as R, byte for byte what older daemons read")
    func defaultFocusIsAnRRecord() {
        let bytes = JournalCodec.encode(.room(saved()))
        #expect(bytes[JournalCodec.headerSize] == UInt8(ascii: "R"))
        #expect(bytes.count == JournalCodec.encode(.room(saved(line: 2))).count - 12)
    }

    @Test("the F record's bytes are the documented format")
    func documentedBytes() {
        #expect(JournalCodec.encode(.room(saved(line: 212, mark: range(210, 215))))
            == framed(focusPayload(line: 212, first: 210, last: 215)))
        #expect(JournalCodec.encode(.room(saved(line: 7))) == framed(focusPayload(line: 7, first: 0, last: 0)), "no mark is 0 | 0")
    }

    // Cut-short and bit-flipped F frames: JournalCodecTests' damage tests run on an F record too.

    @Test("an F record with a good checksum but an impossible line or mark is damage")
    func impossibleFocus() {
        #expect(frame(framed(focusPayload(line: 5, first: 2, last: 4))) != .damaged, "a well-formed F record (control)")
        #expect(frame(framed(focusPayload(line: 0, first: 0, last: 0))) == .damaged, "line 0")
        #expect(frame(framed(focusPayload(line: 1, first: 0, last: 3))) == .damaged, "a mark from line 0")
        #expect(frame(framed(focusPayload(line: 1, first: 5, last: 3))) == .damaged, "a mark going backwards")
        #expect(frame(framed(focusPayload(line: 1, first: 3, last: 0))) == .damaged, "half a mark")
        #expect(frame(framed(focusPayload(line: 1, first: 1, last: 1, trailing: [0]))) == .damaged, "a trailing byte")
        #expect(frame(framed(Array(focusPayload(line: 1, first: 1, last: 1).dropLast()))) == .damaged, "a byte short")
        var noFocus = focusPayload(line: 1, first: 0, last: 0)
        noFocus.removeLast(12)
        #expect(frame(framed(noFocus)) == .damaged, "F without its focus")
    }

    @Test("a torn F write is located by its own fields")
    func naturalLength() {
        let bytes = JournalCodec.encode(.room(saved(line: 9)))
        let payload = bytes.count - JournalCodec.headerSize
        let length = bytes.withUnsafeBytes {
            JournalCodec.naturalPayloadLength(in: $0, payloadAt: JournalCodec.headerSize, limit: bytes.count)
        }
        #expect(length == payload)
    }

    @Test("recovery gives each room the line and mark of its last record, F or R, and checks versions across both")
    func recovery() {
        var bytes: [UInt8] = []
        for record: JournalRecord in [
            .opened(bootID: "b"), .room(saved("a", version: 1, line: 40, mark: range(40, 44))),
            .room(saved("b", version: 3, line: 12)), .room(saved("a", version: 2)),
            .room(saved("c", version: 1)), .room(saved("c", version: 2, mark: range(2, 2))),
        ] { JournalCodec.append(record, to: &bytes) }
        let r = JournalRecovery(scanning: bytes)
        #expect(r.damage.isEmpty && r.recordCount == 6)
        #expect(r.rooms == ["a": saved("a", version: 2), "b": saved("b", version: 3, line: 12), "c": saved("c", version: 2, mark: range(2, 2))])
        JournalCodec.append(.room(saved("b", version: 2, line: 13)), to: &bytes)
        let back = JournalRecovery(scanning: bytes)
        #expect(back.damage.contains { if case .versionWentBack(room: "b", _, from: 3, to: 2) = $0 { true } else { false } })
    }

    @Test("a restart keeps the line and mark; a changed document or a clamped page starts at line 1 with no mark")
    func restore() {
        let room = saved(line: 40, mark: range(40, 44))
        let same = RoomRestore.restore(saved: room, pageCount: 6, doc: "5f1c3a2b", freshEpoch: Epoch(1))
        #expect(same.state.line == 40 && same.state.mark == range(40, 44) && !same.needsSave && same.state.version == 17)
        let edited = RoomRestore.restore(saved: room, pageCount: 6, doc: "0000beef", freshEpoch: Epoch(1))
        #expect(edited.state.line == 1 && edited.state.mark == nil && edited.needsSave && edited.state.version == 18)
        let shorter = RoomRestore.restore(saved: room, pageCount: 2, doc: "5f1c3a2b", freshEpoch: Epoch(1))
        #expect(shorter.state.page == PageNumber(2)! && shorter.state.line == 1 && shorter.state.mark == nil)
        #expect(SavedRoom(room: "walk", state: same.state) == room)
    }
}
