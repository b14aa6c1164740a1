import Foundation
import Testing

/// Each document is paged by its own rule: Markdown by its structure (top-level `---`), the rest
/// at form feeds, unless `--split` (every file) or the room's `split:` key (one room) says otherwise.
@Suite("Split mode per document", .timeLimit(.minutes(1)))
struct SplitByExtensionTests {
    /// Three pages at form feeds; its `---` lines are text, not breaks.
    static let notes = "notes one\n---\nstill one\n\u{0C}notes two\n\u{0C}notes three\n"
    /// Three slides at `---` rules (the last one under a line of text is that line's heading, not
    /// a rule); no form feed.
    static let slides = "# Title\n\n---\n\n## Second slide\ntext\n\n---\n## Last slide\nthe end\n---\n"

    /// The page count of each room, from `ROOMS`.
    static func pageCounts(_ daemon: Daemon) async throws -> [String: Int] {
        let (client, _) = try await daemon.join()
        let rooms = try await client.command("ROOMS")
        var out: [String: Int] = [:]
        for line in rooms.lines.map(ServerLine.init) { out[line.kind] = line.pages }
        return out
    }

    /// `TEXT <page>` of `room`, as lines.
    static func text(_ daemon: Daemon, room: String, page: Int) async throws -> [String] {
        let (client, _) = try await daemon.join()
        try await client.ok("JOIN \(room)")
        return try await client.command("TEXT \(page)").lines
    }

    @Test("on the command line without --split, slides.md splits at --- and notes.txt at form feeds")
    func commandLineFiles() async throws {
        try await withDaemon(["notes.txt": Self.notes, "slides.md": Self.slides]) { daemon, _ in
            let counts = try await Self.pageCounts(daemon)
            #expect(counts == ["notes": 3, "slides": 3])
            let slide = try await Self.text(daemon, room: "slides", page: 2)
            #expect(slide == ["", "## Second slide", "text", ""])
            let note = try await Self.text(daemon, room: "notes", page: 1)
            #expect(note == ["notes one", "---", "still one"])
        }
    }

    @Test("--split still applies to every file")
    func splitFlagAppliesToAll() async throws {
        try await withDaemon(["notes.txt": Self.notes, "slides.md": Self.slides], arguments: ["--split", "formfeed"]) { daemon, _ in
            let counts = try await Self.pageCounts(daemon)
            #expect(counts == ["notes": 3, "slides": 1])
        }
    }

    @Test("in the config file, a room without split: is paged by its extension; split: wins")
    func configFileRooms() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Self.notes)
            try workspace.write("slides.md", Self.slides)
            try workspace.write("book.md", Self.slides)
            let config = try workspace.write("pagesyncd.yaml", """
                listen: "127.0.0.1:0"
                state-dir: "\(workspace.url("state").path)"
                rooms: [notes, slides, book]
                room:
                  notes:
                    file: notes.txt
                  slides:
                    file: slides.md
                  book:
                    file: book.md
                    split: "lines:4"
                """)
            let daemon = try await workspace.startDaemon(arguments: ["--config", config.path], addDefaults: false)
            let counts = try await Self.pageCounts(daemon)
            #expect(counts == ["notes": 3, "slides": 3, "book": 3])
            let last = try await Self.text(daemon, room: "slides", page: 3)
            #expect(last == ["## Last slide", "the end", "---"])
        }
    }
}
