import Testing
import PageSyncCore

/// What a directory watcher's event means: which rooms' documents may have changed.
@Suite struct DocumentWatchIndexTests {
    let index = DocumentWatchIndex([
        (room: "talk", path: "/srv/slides/talk.md"),
        (room: "notes", path: "/srv/slides/notes.txt"),
        (room: "mirror", path: "/srv/slides/talk.md"),
        (room: "root", path: "/top.txt"),
        (room: "here", path: "local.txt"),
        (room: "sub", path: "docs/a.txt"),
    ])

    @Test func aFileNoRoomServesChangesNoRoom() {
        #expect(index.rooms(changedIn: "/srv/slides", file: "build.log").isEmpty)
        #expect(index.rooms(changedIn: "/srv/slides", file: "talk.md~").isEmpty)
        #expect(index.rooms(changedIn: "/srv/other", file: "talk.md").isEmpty)
        #expect(index.rooms(changedIn: "/srv/other", file: nil).isEmpty)
    }

    @Test func aServedFileChangesEveryRoomServingIt() {
        #expect(index.rooms(changedIn: "/srv/slides", file: "talk.md") == ["talk", "mirror"])
        #expect(index.rooms(changedIn: "/srv/slides", file: "notes.txt") == ["notes"])
        #expect(index.rooms(changedIn: "/", file: "top.txt") == ["root"])
        #expect(index.rooms(changedIn: ".", file: "local.txt") == ["here"])
        #expect(index.rooms(changedIn: "docs", file: "a.txt") == ["sub"])
    }

    @Test func anEventWithoutAFileNameChangesEveryRoomInTheDirectory() {
        #expect(Set(index.rooms(changedIn: "/srv/slides", file: nil)) == ["talk", "notes", "mirror"])
        #expect(index.rooms(changedIn: "/srv/slides", file: nil).count == 3)
        #expect(index.rooms(changedIn: "/", file: nil) == ["root"])
    }

    @Test func theDirectoriesToWatchAreThoseHoldingADocument() {
        #expect(index.directories == ["/srv/slides", "/", ".", "docs"])
        #expect(DocumentWatchIndex().directories.isEmpty)
        #expect(DocumentWatchIndex().rooms(changedIn: ".", file: nil).isEmpty)
    }

    @Test func pathsSplitAsAWatcherReportsThem() {
        #expect(DocumentWatchIndex.split("/srv/slides/talk.md") == ("/srv/slides", "talk.md"))
        #expect(DocumentWatchIndex.split("/top.txt") == ("/", "top.txt"))
        #expect(DocumentWatchIndex.split("local.txt") == (".", "local.txt"))
        #expect(DocumentWatchIndex.split("docs/a.txt") == ("docs", "a.txt"))
        #expect(DocumentWatchIndex.split("a b/ü ñ.md") == ("a b", "ü ñ.md"))
    }

    @Test func agreesWithScanningEveryRoomForEveryEvent() {
        // The rule the index replaces: for each room, split its path and compare, per event.
        var generator = SystemRandomNumberGenerator()
        let directories = ["/a", "/a/b", "/", ".", "rel", "/a b"]
        let names = ["x.txt", "y.md", "z", "x.txt~"]
        for _ in 0..<200 {
            let documents = (0..<Int.random(in: 0...12, using: &generator)).map { i -> (room: String, path: String) in
                let directory = directories.randomElement(using: &generator)!
                let name = names.randomElement(using: &generator)!
                let path = directory == "." && Bool.random(using: &generator) ? name : (directory == "/" ? "/\(name)" : "\(directory)/\(name)")
                return (room: "r\(i)", path: path)
            }
            let index = DocumentWatchIndex(documents)
            for directory in directories {
                for file in names.map(Optional.some) + [nil] {
                    let scanned = documents.filter { document in
                        let (d, f) = DocumentWatchIndex.split(document.path)
                        return d == directory && (file == nil || file == f)
                    }.map(\.room)
                    #expect(Set(index.rooms(changedIn: directory, file: file)) == Set(scanned))
                    #expect(index.rooms(changedIn: directory, file: file).count == scanned.count)
                }
            }
        }
    }
}
