import Testing
import PageSyncCore

@Suite struct ByteLineTests {
    /// A line holds exactly what ``ByteWriter/bytes(capacity:_:)`` gives for the same writes.
    @Test func holdsWhatAnArrayWouldHold() {
        let writes: (inout ByteWriter) -> Void = { out in
            out.ascii("PAGE v=")
            out.decimal(UInt64(42))
            out.byte(0x0A)
        }
        let line = ByteLine.write(capacity: 32, writes)
        #expect(line.bytes == ByteWriter.bytes(capacity: 32, writes))
        #expect(line.bytes == Array("PAGE v=42\n".utf8))
        #expect(line.count == 10)
        #expect(line.withUnsafeBytes { Array($0) } == line.bytes)
    }

    @Test func writingLessThanTheCapacityCountsOnlyWhatWasWritten() {
        let line = ByteLine.write(capacity: 100) { $0.ascii("ab") }
        #expect(line.count == 2)
        #expect(line.withUnsafeBytes { $0.count } == 2)
    }

    @Test(arguments: [[], [0x00], Array("OK page=2 pages=6 version=3\n".utf8), [UInt8](repeating: 0xFF, count: 70_000)])
    func copyingKeepsEveryByte(bytes: [UInt8]) {
        let line = ByteLine.copying(bytes)
        #expect(line.count == bytes.count)
        #expect(line.bytes == bytes)
    }

    @Test func anEmptyLineHasNoBytes() {
        let line = ByteLine.write(capacity: 0) { _ in }
        #expect(line.count == 0)
        #expect(line.bytes.isEmpty)
    }

    /// The same bound as ``ByteWriter``'s: writing past the capacity stops the process.
    @Test func writingPastTheCapacityStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            _ = ByteLine.write(capacity: 2) { $0.ascii("abc") }
        }
    }
}
