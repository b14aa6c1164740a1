import PageSyncCore
import Testing

@testable import PageSyncServer

@Suite struct StateStoreTests {
    @Test func roundTripsAndCreatesTheDirectory() throws {
        let dir = TempDir()
        let store = try StateStore(directory: dir.path + "/a/b", fsync: true)
        let state = PersistedRoom(page: PageNumber(3)!, version: 17, by: "ann", doc: "abc")
        try store.save(state, room: "notes")
        #expect(store.load(room: "notes") == state)
        // The temporary file is gone after the rename.
        #expect(dir.read("a/b/.notes.state.tmp") == nil)
        #expect(dir.read("a/b/notes.state") != nil)
    }

    @Test func aLaterSaveReplacesTheEarlierOne() throws {
        let dir = TempDir()
        let store = try StateStore(directory: dir.path, fsync: false)
        try store.save(PersistedRoom(page: PageNumber(1)!, version: 1, by: nil, doc: nil), room: "r")
        try store.save(PersistedRoom(page: PageNumber(5)!, version: 9, by: "bob", doc: "d"), room: "r")
        #expect(store.load(room: "r") == PersistedRoom(page: PageNumber(5)!, version: 9, by: "bob", doc: "d"))
    }

    @Test func missingStateIsNilAndGarbageIsReported() throws {
        let dir = TempDir()
        let store = try StateStore(directory: dir.path, fsync: false)
        var problems: [String] = []
        #expect(store.load(room: "none") { problems.append($0) } == nil)
        #expect(problems.isEmpty)
        dir.write("bad.state", "hello world\n")
        #expect(store.load(room: "bad") { problems.append($0) } == nil)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("bad.state") == true)
    }

    @Test func aFileWhereTheDirectoryShouldBeIsAnError() throws {
        let dir = TempDir()
        let file = dir.write("plain", "x")
        #expect(throws: StateStoreError.self) { try StateStore(directory: file, fsync: false) }
    }
}
