import Foundation
import Testing

/// Speaker notes over the network: `NOTES` for members with control only, never in anything the
/// audience (a member without control, or plain `nc`) receives; edits to notes alone move nobody.
@Suite("Speaker notes", .timeLimit(.minutes(1)))
struct NotesTests {
    /// The repository's presenterm deck with notes (Tests/Decks/speaker-notes.md).
    static func deck() throws -> String {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: tests.appendingPathComponent("Decks/speaker-notes.md"), encoding: .utf8)
    }

    /// Words that appear only in the deck's notes.
    static let noteWords = ["Ask who", "whiteboard", "SECRET-NOTE-THREE", "organisers", "speaker_note", "notes:"]

    @Test("the presenterm deck unchanged: NOTES with control, ERR 403 without; the audience and nc never see a note")
    func presentermDeck() async throws {
        try await withDaemon(["talk.md": try Self.deck()], arguments: ["--token", "s3cret"]) { daemon, _ in
            let (audience, hello) = try await daemon.join(label: "audience")
            var heard = [hello.raw]
            let (presenter, _) = try await daemon.join(label: "presenter")
            try await presenter.ok("AUTH s3cret")

            let three = try await presenter.command("NOTES 3")
            #expect(three.header.raw.hasPrefix("OK NOTES page=3 pages=5 doc=\(hello["doc"] ?? "-") "), "\(three)")
            #expect(three.lines == ["SECRET-NOTE-THREE: slow down here."])
            let two = try await presenter.command("NOTES 2")
            #expect(two.lines == ["Draw the coordinator on the whiteboard.", "Mention that versions survive restarts."])
            let four = try await presenter.command("NOTES 4")
            #expect(four.header["bytes"] == "0" && four.header["lines"] == "0" && four.lines.isEmpty, "\(four)")
            #expect(try await presenter.command("NOTES").lines == ["Ask who has given a talk from a terminal."], "the room's page")
            #expect(try await presenter.command("NOTES 6").header.raw == "ERR 404 no page 6: this document has 5 pages")

            for line in ["NOTES", "NOTES 3", "NOTES 6"] {
                let refused = try await audience.command(line)
                #expect(refused.header.raw == "ERR 403 notes are for those with control; send AUTH <token>", "\(refused)")
                heard.append(refused.description)
            }
            try await presenter.ok("GOTO 3")
            for page in 1...5 {
                let text = try await audience.command("TEXT \(page)")
                heard.append(text.description)
                if page == 3 { #expect(text.lines.contains("Followers reconcile to the whole state.")) }
            }
            heard.append(try await audience.command("STATUS").description)
            heard += audience.takeSkippedEvents().map(\.raw)
            #expect(heard.contains { $0.hasPrefix("PAGE ") && $0.contains("page=3") }, "the audience followed")

            let script = "printf 'notes\\nnotes 3\\ntext 1\\ntext 2\\ntext 3\\ntext 4\\ntext 5\\nstatus\\nhelp\\nquit\\n' | nc -q1 127.0.0.1 \(daemon.port)"
            let nc = try await runProcess("/bin/sh", ["-c", script])
            #expect(nc.output.contains("ERR 403 notes are for those with control") && nc.output.contains("OK BYE"), "\(nc.output)")
            #expect(nc.output.contains("Then the demo."), "nc read the pages")
            for word in Self.noteWords {
                #expect(!heard.contains { $0.contains(word) }, "the audience received \(word)")
                #expect(!nc.output.contains(word), "nc received \(word)")
            }
        }
    }

    @Test("a notes file beside a plain document: binary bytes sanitized, notes over max-text cut; editing it moves nobody, a mismatch is logged")
    func notesFile() async throws {
        try await withWorkspace { workspace in
            try workspace.write("plain.txt", "one\n\u{0C}two\n\u{0C}three\n")
            let big = String(repeating: "n", count: (1 << 20) + 500)
            _ = try workspace.write("plain.txt.notes", bytes: Array("first\u{0C}bin\u{FF}\u{FE}ary".utf8).map { $0 == 0xC3 ? 0xFF : $0 }
                + Array("\u{0C}\(big)\n".utf8))
            let daemon = try await workspace.startDaemon(documents: ["plain.txt"])
            let (client, hello) = try await daemon.join(label: "open room: everyone has control")
            #expect(try await client.command("NOTES 1").lines == ["first"])
            let binary = try await client.command("NOTES 2")
            #expect(binary.lines.count == 1 && binary.lines[0].hasPrefix("bin\u{FFFD}") && binary.lines[0].hasSuffix("ary"), "\(binary)")
            let cut = try await client.command("NOTES 3")
            #expect(cut.header["truncated"] == "yes" && cut.header.int("bytes") == big.utf8.count, "\(cut.header)")
            #expect(cut.lines.reduce(0) { $0 + $1.utf8.count } == 1 << 20)

            try workspace.write("plain.txt.notes", "first, edited\u{0C}")
            var edited: [String] = []
            for _ in 0..<100 {
                edited = try await client.command("NOTES 1").lines
                if edited == ["first, edited"] { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(edited == ["first, edited"], "the file change re-read the notes")
            #expect(try await client.command("NOTES 2").lines.isEmpty, "a page past the notes file's end has none")
            #expect(daemon.stderr.contains("plain.txt.notes: the notes file has 1 pages, the document 3: pages 2-3 have no notes"),
                    "the new mismatch is logged: \(daemon.stderr)")
            let status = try await client.ok("STATUS")
            #expect(status["doc"] == hello["doc"] && status.version == 0, "\(status.raw)")
            #expect(client.takeSkippedEvents().isEmpty, "no PAGE for a notes edit")
        }
    }
}
