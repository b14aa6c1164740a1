import Testing
import PageSyncCore

/// The writer the per-change encoders share: exact bytes, the count of what was written, and
/// patching a header after its payload.
@Suite struct ByteWriterTests {
    @Test func writesWhatItIsGivenAndCountsIt() {
        let bytes = ByteWriter.bytes(capacity: 64) { out in
            out.ascii("k=")
            out.decimal(UInt64(42))
            out.byte(0x20)
            out.decimal(-7)
            out.byte(0x20)
            out.hex16(0xBEEF)
            out.utf8("été", prefix: 3)  // "é" and "t"
            out.littleEndian(UInt16(0x0102))
            out.zeros(2)
            #expect(out.count == 2 + 2 + 1 + 2 + 1 + 16 + 3 + 2 + 2)
        }
        #expect(bytes == Array("k=42 -7 000000000000beef\u{E9}t".utf8) + [0x02, 0x01, 0, 0])
        #expect(bytes.capacity >= bytes.count)
    }

    @Test func anEmptyCapacityGivesAnEmptyArray() {
        #expect(ByteWriter.bytes(capacity: 0) { _ in } == [])
    }

    @Test func aHeaderIsFilledInAfterItsPayload() {
        let bytes = ByteWriter.bytes(capacity: 16) { out in
            out.zeros(4)
            out.ascii("abc")
            out.store(littleEndian: UInt32(out.count - 4), at: 0)
            #expect(Array(out.written(4..<7)) == Array("abc".utf8))
        }
        #expect(bytes == [3, 0, 0, 0] + Array("abc".utf8))
    }

    @Test func controlsBecomeSpacesAndC1PairsOneSpace() {
        let text = "a\r\nb\u{7F}\u{85}c\u{A0}\u{1B}[31m"
        let bytes = ByteWriter.bytes(capacity: text.utf8.count) { $0.utf8ReplacingControls(text) }
        #expect(bytes == Array("a  b  c\u{A0} [31m".utf8))
        #expect(bytes == Array(ControlCharacters.replacingControls(text).utf8))
    }

    /// The stated capacity is a bound, not a hint: writing past it stops the process rather
    /// than touching memory the array does not own.
    @Test func writingPastTheCapacityStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            _ = ByteWriter.bytes(capacity: 2) { $0.ascii("abc") }
        }
        await #expect(processExitsWith: .failure) {
            _ = ByteWriter.bytes(capacity: 19) { $0.decimal(UInt64.max) }
        }
    }
}

