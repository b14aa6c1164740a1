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

@Suite struct StateStoreInPlaceTests {
    /// Without fsync the record is overwritten in place, padded, and the file never shrinks,
    /// so a shorter record after a longer one still decodes (no truncate, no rename).
    @Test func inPlaceSavesNeverShrinkAndStillDecode() throws {
        let dir = TempDir()
        let store = try StateStore(directory: dir.path, fsync: false)
        let long = PersistedRoom(page: PageNumber(7)!, version: 123, by: String(repeating: "a", count: 32), doc: String(repeating: "d", count: 600))
        try store.save(long, room: "r")
        let size = dir.read("r.state")?.utf8.count ?? 0
        #expect(size >= 1024)
        let short = PersistedRoom(page: PageNumber(2)!, version: 124, by: "b", doc: "x")
        try store.save(short, room: "r")
        #expect(dir.read("r.state")?.utf8.count == size)
        #expect(store.load(room: "r") == short)
        #expect(dir.read(".r.state.tmp") == nil)
    }
}
