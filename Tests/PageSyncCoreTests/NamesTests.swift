import Testing
import PageSyncCore

@Suite struct NamesTests {
    @Test(arguments: ["a", "Z", "0", "guest-1", "My.Deck_v2", "-", ".", "..", String(repeating: "x", count: 32)])
    func valid(_ name: String) {
        #expect(Names.isValid(name))
    }

    @Test(arguments: ["", " ", "a b", "a/b", "é", "ann!", "tab\t", "x\n", String(repeating: "x", count: 33), "日本"])
    func invalid(_ name: String) {
        #expect(!Names.isValid(name))
    }

    @Test(arguments: [
        ("notes.txt", "notes"),
        ("/a/b/My Deck.md", "My-Deck"),
        ("talk", "talk"),
        ("archive.tar.gz", "archive.tar"),
        ("/dir.with.dots/file", "file"),
        (".bashrc", ".bashrc"),
        ("dir/", "dir"),
        ("/", "room"),
        ("", "room"),
        (".md", ".md"),
        ("Café Notes.txt", "Caf--Notes"),
        ("a?b*c.md", "a-b-c"),
        ("relative/path/slides.v2.md", "slides.v2"),
    ])
    func roomNameForFile(_ path: String, _ expected: String) {
        let name = Names.roomName(forFile: path)
        #expect(name == expected)
        #expect(Names.isValid(name))
    }

    @Test func roomNameIsTruncatedTo32() {
        let name = Names.roomName(forFile: "/tmp/" + String(repeating: "abcdefghij", count: 5) + ".txt")
        #expect(name == String(repeating: "abcdefghij", count: 3) + "ab")
        #expect(Names.isValid(name))
        let unicode = Names.roomName(forFile: String(repeating: "é", count: 40))
        #expect(unicode == String(repeating: "-", count: 32))
    }
}
