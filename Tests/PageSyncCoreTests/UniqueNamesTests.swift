import Testing
import PageSyncCore

@Suite struct UniqueNamesTests {
    @Test func guestNames() {
        #expect(UniqueNames.isGuestName("guest-1"))
        #expect(UniqueNames.isGuestName("guest-204"))
        #expect(!UniqueNames.isGuestName("guest-"))
        #expect(!UniqueNames.isGuestName("guest-x1"))
        #expect(!UniqueNames.isGuestName("guest"))
        #expect(!UniqueNames.isGuestName("Guest-1"))
        #expect(!UniqueNames.isGuestName("guest-1a"))
    }

    @Test func renaming() {
        #expect(UniqueNames.mayRename(to: "ann", from: "guest-3", others: ["bob"]))
        #expect(!UniqueNames.mayRename(to: "ann", from: "guest-3", others: ["bob", "ann"]))
        #expect(UniqueNames.mayRename(to: "Ann", from: "guest-3", others: ["ann"]))  // names are case-sensitive
        #expect(UniqueNames.mayRename(to: "ann", from: "ann", others: ["ann"]))  // keeping your own name
        #expect(!UniqueNames.mayRename(to: "guest-9", from: "ann", others: []))  // the server's names
        #expect(UniqueNames.mayRename(to: "guest-3", from: "guest-3", others: []))
    }

    @Test func joining() {
        #expect(UniqueNames.mayJoin(as: "ann", others: ["bob"]))
        #expect(!UniqueNames.mayJoin(as: "ann", others: ["bob", "ann"]))
        #expect(UniqueNames.mayJoin(as: "ann", others: []))
    }
}
