import Testing
import UV

@Suite struct GatheredBytesTests {
    /// 40 parts of 0 to 39 bytes, in groups of 16: three groups (16, 16, 8), each part's bytes
    /// readable in its group, in order, nothing left out.
    @Test func everyPartArrivesInOrderAndAGroupHoldsAtMostGroupSize() {
        let parts: [[UInt8]] = (0..<40).map { n in [UInt8](repeating: UInt8(n), count: n) }
        var groups: [Int] = []
        var seen: [[UInt8]] = []
        withGatheredBytes(parts, groupSize: 16) { group in
            groups.append(group.count)
            // Read inside the call: every pointer of the group is valid at once.
            for bytes in group { seen.append(Array(bytes)) }
        }
        #expect(groups == [16, 16, 8])
        #expect(seen == parts)
    }

    @Test(arguments: [1, 2, 16, 100])
    func theGroupSizeOnlyChangesHowTheyAreGrouped(groupSize: Int) {
        let parts: [[UInt8]] = (0..<7).map { Array("part \($0)\n".utf8) }
        var joined: [UInt8] = []
        var calls = 0
        withGatheredBytes(parts, groupSize: groupSize) { group in
            calls += 1
            for bytes in group { joined += Array(bytes) }
        }
        #expect(joined == parts.flatMap { $0 })
        #expect(calls == (parts.count + groupSize - 1) / groupSize)
    }

    @Test func noPartsCallsNothing() {
        var calls = 0
        withGatheredBytes([[UInt8]]()) { _ in calls += 1 }
        #expect(calls == 0)
    }
}
