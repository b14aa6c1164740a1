import Foundation
import Testing
import UV

@Suite struct DirectoryEntriesTests {
    @Test func listsEveryNameButDotAndDotDot() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pagesync-dir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Short and long names (records of different lengths), a dot file, a directory, and UTF-8.
        let names = ["a", "room.state", ".hidden", String(repeating: "n", count: 255), "été.txt", "sub"]
        for name in names.dropLast() {
            try Data("x".utf8).write(to: dir.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: false)
        #expect(DirectoryEntries.names(in: dir.path)?.sorted() == names.sorted())
    }

    @Test func aDirectoryThatCannotBeOpenedGivesNil() {
        #expect(DirectoryEntries.names(in: "/nonexistent/pagesync/\(UUID().uuidString)") == nil)
    }
}
