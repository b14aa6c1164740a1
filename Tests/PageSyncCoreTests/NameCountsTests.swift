import TestSupport
import Testing
import PageSyncCore

/// The per-room count of member names that `NAME` and `JOIN` are answered from.
@Suite struct NameCountsTests {
    @Test func emptyHoldsNothing() {
        let names = NameCounts()
        #expect(names.isEmpty && names.distinctCount == 0)
        #expect(names.count(of: "ann") == 0)
        #expect(!names.isHeld("ann", byOtherThan: nil))
        #expect(!names.isHeld("ann", byOtherThan: "ann"))
        #expect(names == NameCounts([]))
    }

    @Test func addCountsEachHolder() {
        var names = NameCounts()
        names.add("ann")
        #expect(names.count(of: "ann") == 1 && names.distinctCount == 1 && !names.isEmpty)
        names.add("ann")
        names.add("bob")
        #expect(names.count(of: "ann") == 2 && names.count(of: "bob") == 1 && names.distinctCount == 2)
        #expect(names == NameCounts(["bob", "ann", "ann"]))
        #expect(names.count(of: "Ann") == 0, "names compare exactly")
    }

    @Test func removingTheLastHolderFreesTheName() {
        var names = NameCounts(["ann", "ann", "bob"])
        names.remove("ann")
        #expect(names.count(of: "ann") == 1 && names.isHeld("ann", byOtherThan: nil))
        names.remove("ann")
        #expect(names.count(of: "ann") == 0 && !names.isHeld("ann", byOtherThan: nil))
        #expect(names == NameCounts(["bob"]), "no entry is left behind for a freed name")
        names.remove("bob")
        #expect(names.isEmpty && names == NameCounts())
    }

    @Test func removingANameNobodyHoldsChangesNothing() {
        var names = NameCounts(["ann"])
        names.remove("bob")
        names.remove("Ann")
        #expect(names == NameCounts(["ann"]))
    }

    @Test func renameMovesOneHolder() {
        var names = NameCounts(["guest-1", "guest-2"])
        names.rename("guest-1", to: "ann")
        #expect(names == NameCounts(["ann", "guest-2"]))
        #expect(names.count(of: "guest-1") == 0, "the old name is free again")
        names.rename("ann", to: "bob")
        #expect(names == NameCounts(["bob", "guest-2"]))
    }

    @Test func renameToTheSameNameChangesNothing() {
        var names = NameCounts(["ann", "bob"])
        names.rename("ann", to: "ann")
        #expect(names == NameCounts(["ann", "bob"]))
        #expect(names.count(of: "ann") == 1)
    }

    @Test func renameOfOneOfTwoHoldersLeavesTheOther() {
        var names = NameCounts(["ann", "ann"])
        names.rename("ann", to: "bob")
        #expect(names.count(of: "ann") == 1 && names.count(of: "bob") == 1)
    }

    @Test func heldByOtherThanTheAsker() {
        let names = NameCounts(["ann", "bob", "bob"])
        // The asker is counted under its own name: holding it yourself does not make it taken.
        #expect(!names.isHeld("ann", byOtherThan: "ann"))
        #expect(names.isHeld("ann", byOtherThan: "bob"))
        #expect(names.isHeld("bob", byOtherThan: "bob"), "a second holder takes it")
        #expect(!names.isHeld("cy", byOtherThan: "ann"))
        // An asker not counted here (about to join): any holder takes it.
        #expect(names.isHeld("ann", byOtherThan: nil))
        #expect(!names.isHeld("cy", byOtherThan: nil))
    }

    @Test func aNameHeldInTwoRoomsIsCountedInEachOnItsOwn() {
        var talk = NameCounts(["ann"])
        var other = NameCounts(["ann"])
        // ann leaves talk for a third room: other's ann is untouched.
        talk.remove("ann")
        #expect(!talk.isHeld("ann", byOtherThan: nil))
        #expect(other.isHeld("ann", byOtherThan: nil))
        #expect(UniqueNames.mayJoin(as: "ann", into: talk))
        #expect(!UniqueNames.mayJoin(as: "ann", into: other))
        other.rename("ann", to: "bob")
        #expect(UniqueNames.mayJoin(as: "ann", into: other))
    }
}

/// ``UniqueNames`` answered from ``NameCounts`` gives the answers of its walk over the other
/// members, for rooms changed by every kind of step the coordinator takes.
@Suite struct UniqueNamesFromCountsTests {
    @Test func guestNamesAreNotCountedSinceTheyNeverCollide() {
        var names = NameCounts(["guest-1", "guest-2", "ann"])
        #expect(names.distinctCount == 1, "only ann is held: guest names are the server's")
        #expect(names.count(of: "guest-1") == 0)
        #expect(!names.isHeld("guest-1", byOtherThan: "guest-1"))
        #expect(UniqueNames.mayJoin(as: "guest-1", into: names), "a guest joins any room under its own name")
        #expect(!UniqueNames.mayRename(to: "guest-2", from: "ann", in: names), "and no one else takes it")
        names.rename("guest-2", to: "bob")
        #expect(names == NameCounts(["ann", "bob"]))
        names.remove("guest-1")
        #expect(names.distinctCount == 2)
        #expect(NameCounts(["guest-12x"]).count(of: "guest-12x") == 1, "guest- and not only digits is an ordinary name")
    }

    @Test func theCountedFormsFollowTheSameRules() {
        let room = NameCounts(["guest-3", "bob", "ann"])  // the asker is guest-3 or ann
        #expect(UniqueNames.mayRename(to: "cy", from: "guest-3", in: room))
        #expect(!UniqueNames.mayRename(to: "ann", from: "guest-3", in: room))
        #expect(UniqueNames.mayRename(to: "Ann", from: "guest-3", in: room), "names are case-sensitive")
        #expect(UniqueNames.mayRename(to: "ann", from: "ann", in: room), "keeping your own name")
        #expect(!UniqueNames.mayRename(to: "guest-9", from: "ann", in: room), "the server's names")
        #expect(UniqueNames.mayRename(to: "guest-3", from: "guest-3", in: room))
        #expect(!UniqueNames.mayRename(to: "guest-3", from: "ann", in: room))
        #expect(UniqueNames.mayJoin(as: "cy", into: room))
        #expect(!UniqueNames.mayJoin(as: "ann", into: room))
        #expect(UniqueNames.mayJoin(as: "ann", into: NameCounts()))
    }

    /// Clients connect, rename, move between rooms and leave at random; after every step each
    /// room's counts equal its members' names, and every NAME and JOIN question is answered
    /// as the walk over the other members answers it.
    @Test func randomRoomsAgreeWithTheWalk() {
        var rng = SeededGenerator(seed: 0x4E41_4D45)
        let pool = ["ann", "bob", "cy", "Ann", "guest-1", "guest-2", "guest-77"]
        struct Member { var id: Int; var name: String; var room: Int }
        var members: [Member] = []
        var rooms = [NameCounts(), NameCounts(), NameCounts()]
        var nextID = 1
        for step in 0..<5_000 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<2:  // connect: a guest name of its own, in room 0
                members.append(Member(id: nextID, name: "guest-\(nextID)", room: 0))
                rooms[0].add("guest-\(nextID)")
                nextID += 1
            case 2 where !members.isEmpty:  // disconnect
                let gone = members.remove(at: Int.random(in: members.indices, using: &rng))
                rooms[gone.room].remove(gone.name)
            case 3..<6 where !members.isEmpty:  // NAME
                let i = Int.random(in: members.indices, using: &rng)
                let name = Bool.random(using: &rng) ? pool.randomElement(using: &rng)! : members[i].name
                let others = members.filter { $0.room == members[i].room && $0.id != members[i].id }.map(\.name)
                let walked = UniqueNames.mayRename(to: name, from: members[i].name, others: others)
                let counted = UniqueNames.mayRename(to: name, from: members[i].name, in: rooms[members[i].room])
                #expect(walked == counted, "step \(step): NAME \(name) from \(members[i].name)")
                if counted {
                    rooms[members[i].room].rename(members[i].name, to: name)
                    members[i].name = name
                }
            case 6..<10 where !members.isEmpty:  // JOIN
                let i = Int.random(in: members.indices, using: &rng)
                let target = Int.random(in: rooms.indices, using: &rng)
                guard target != members[i].room else { continue }
                let others = members.filter { $0.room == target }.map(\.name)
                let walked = UniqueNames.mayJoin(as: members[i].name, others: others)
                let counted = UniqueNames.mayJoin(as: members[i].name, into: rooms[target])
                #expect(walked == counted, "step \(step): JOIN \(target) as \(members[i].name)")
                if counted {
                    rooms[members[i].room].remove(members[i].name)
                    rooms[target].add(members[i].name)
                    members[i].room = target
                }
            default:
                continue
            }
            for (index, counts) in rooms.enumerated() {
                #expect(counts == NameCounts(members.filter { $0.room == index }.map(\.name)), "step \(step), room \(index)")
            }
        }
    }
}
