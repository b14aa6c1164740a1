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

@Suite struct TextFromParsingTests {
    @Test func parsesTextFrom() {
        #expect(CommandParser.parse(Array("TEXT 3 FROM 1024".utf8)) == .success(Command.textFrom(PageNumber(3)!, offset: 1024)))
        #expect(CommandParser.parse(Array("text 1 from 0".utf8)) == .success(Command.textFrom(PageNumber(1)!, offset: 0)))
        if case .failure(let e) = CommandParser.parse(Array("TEXT 1 FROM".utf8)) {
            #expect(e.message == "FROM needs a byte offset: TEXT <n> FROM <offset>")
        } else { Issue.record("TEXT 1 FROM parsed") }
        if case .failure(let e) = CommandParser.parse(Array("TEXT 1 FROM x".utf8)) {
            #expect(e.message == "\"x\" is not a byte offset")
        } else { Issue.record("TEXT 1 FROM x parsed") }
        #expect((try? CommandParser.parse(Array("TEXT 1 FROM 2 3".utf8)).get()) == nil)
    }
}
