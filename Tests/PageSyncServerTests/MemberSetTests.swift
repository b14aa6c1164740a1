import Testing
import PageSyncServer

private final class Member {
    let name: String
    init(_ name: String) { self.name = name }
}

/// The set's view, sorted by id: what a dictionary of the same members would hold.
private func byID(_ set: MemberSet<Member>) -> [Int: String] {
    var result: [Int: String] = [:]
    for (id, member) in zip(set.keys, set.values) { result[id] = member.name }
    return result
}

@Suite struct MemberSetTests {
    @Test func membersAreFoundByIDAndWalkedDensely() {
        var set = MemberSet<Member>()
        #expect(set.isEmpty)
        set[7] = Member("a")
        set[3] = Member("b")
        set[9] = Member("c")
        #expect(set.count == 3)
        #expect(set[3]?.name == "b")
        #expect(set[4] == nil)
        #expect(byID(set) == [7: "a", 3: "b", 9: "c"])
        #expect(set.elements.map(\.name) == ["a", "b", "c"], "insertion order until something is removed")
    }

    @Test func removingMovesTheLastMemberIntoTheHole() {
        var set = MemberSet<Member>()
        for id in 1...4 { set[id] = Member("m\(id)") }
        set[2] = nil
        #expect(set.elements.map(\.name) == ["m1", "m4", "m3"])
        #expect(set[4]?.name == "m4", "the moved member is still found by its id")
        #expect(set[2] == nil)
        set[4] = nil
        set[1] = nil
        #expect(byID(set) == [3: "m3"])
        set[3] = nil
        #expect(set.isEmpty && set.keys.isEmpty)
        set[2] = nil
        #expect(set.isEmpty, "removing an absent id does nothing")
    }

    @Test func settingAnExistingIDReplacesInPlace() {
        var set = MemberSet<Member>()
        set[1] = Member("old")
        set[2] = Member("two")
        set[1] = Member("new")
        #expect(set.count == 2)
        #expect(set.elements.map(\.name) == ["new", "two"])
    }

    @Test func aCopyTakenBeforeChangesKeepsWhatItHad() {
        var set = MemberSet<Member>()
        for id in 1...3 { set[id] = Member("m\(id)") }
        let walked = set.elements
        set[1] = nil
        set[4] = Member("m4")
        #expect(walked.map(\.name) == ["m1", "m2", "m3"], "the fan-out walks the members as they stood")
        #expect(byID(set) == [2: "m2", 3: "m3", 4: "m4"])
    }

    @Test func manyAddsAndRemovesAgreeWithADictionary() {
        var set = MemberSet<Member>()
        var reference: [Int: String] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5_000 {
            let id = Int.random(in: 0..<200, using: &generator)
            if Bool.random(using: &generator) {
                set[id] = Member("m\(step)")
                reference[id] = "m\(step)"
            } else {
                set[id] = nil
                reference[id] = nil
            }
        }
        #expect(byID(set) == reference)
        #expect(set.count == reference.count)
        #expect(Set(set.keys).count == set.count, "no id twice")
    }

    @Test("the revision moves with every member added, replaced or removed, and only then")
    func revisionMovesWithMembership() {
        var set = MemberSet<Member>()
        #expect(set.revision == 0)
        set[1] = Member("a")
        set[2] = Member("b")
        #expect(set.revision == 2)
        _ = set[1]
        _ = set.elements
        set[7] = nil
        #expect(set.revision == 2, "reading, or removing a member that is not there, changes nothing")
        set[1] = Member("a2")
        #expect(set.revision == 3, "a replacement is a change")
        set[2] = nil
        #expect(set.revision == 4)
    }
}
