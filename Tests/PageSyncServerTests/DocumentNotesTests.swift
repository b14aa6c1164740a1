import PageSyncCore
import Testing

import PageSyncServer
import PageSyncMarkdown

/// Speaker notes as the daemon reads them: from markdown comments (never in a page's text or the
/// document's id) and from a notes file beside any other document.
@Suite struct DocumentNotesTests {
    static func notes(_ doc: Document) -> [String] {
        (1...doc.pageCount).map { String(decoding: doc.notes.notes(of: PageNumber($0)!), as: UTF8.self) }
    }

    @Test("markdown notes: served as notes, not in TEXT; the id ignores them; without notes the id is as before")
    func markdown() throws {
        let dir = TempDir()
        let path = dir.write("talk.md", "# One\n<!-- notes: secret one -->\n\n---\n\n# Two\nbody\n")
        let doc = try Document.open(.file(path), pagination: .markdown)
        #expect(try DocumentSplitTests.pages(doc) == ["# One\n\n", "\n# Two\nbody\n"])
        #expect(Self.notes(doc) == ["secret one", ""])
        #expect(doc.text(lines: 1) == 2, "line numbers count without the notes")
        _ = dir.write("talk.md", "# One\n<!-- notes: other words, longer than before -->\n\n---\n\n# Two\nbody\n")
        let edited = try Document.open(.file(path), pagination: .markdown)
        #expect(edited.id == doc.id, "editing notes alone changes no id")
        #expect(Self.notes(edited) == ["other words, longer than before", ""])
        _ = dir.write("talk.md", "# One!\n<!-- notes: other words, longer than before -->\n\n---\n\n# Two\nbody\n")
        #expect(try Document.open(.file(path), pagination: .markdown).id != doc.id, "editing the text does")
        let plain = try Document.open(.file(dir.write("p.md", "# One\n\n---\n\n# Two\n")), pagination: .markdown)
        #expect(plain.notes.isEmpty)
    }

    @Test("a notes file beside a plain document, split the same way; binary bytes kept for the encoder to sanitize")
    func notesFile() throws {
        let dir = TempDir()
        let path = dir.write("talk.txt", "one\n\u{0C}two\n\u{0C}three\n")
        _ = dir.write("talk.txt.notes", "\n  say one\n\n\u{0C}\u{0C}note three \u{1B}[2J\n")
        let doc = try Document.open(.file(path), pagination: .formFeed)
        #expect(Self.notes(doc) == ["  say one", "", "note three \u{1B}[2J"])
        #expect(doc.advice == nil)
        #expect(try DocumentSplitTests.pages(doc) == ["one\n", "two\n", "three\n"])
        let without = try Document.open(.file(dir.write("other.txt", "a\u{0C}b")), pagination: .formFeed)
        #expect(without.notes.isEmpty && without.advice == nil)
    }

    @Test("a notes file with more or fewer pages: extra ignored, missing have none, said once in the advice")
    func mismatch() throws {
        let dir = TempDir()
        let path = dir.write("a.txt", "1\u{0C}2\u{0C}3")
        _ = dir.write("a.txt.notes", "n1\u{0C}n2\u{0C}n3\u{0C}n4\u{0C}n5")
        let more = try Document.open(.file(path), pagination: .formFeed)
        #expect(Self.notes(more) == ["n1", "n2", "n3"])
        #expect(more.advice == "\(path).notes: the notes file has 5 pages, the document 3: the notes of pages 4-5 are ignored")
        _ = dir.write("a.txt.notes", "n1")
        let fewer = try Document.open(.file(path), pagination: .formFeed)
        #expect(Self.notes(fewer) == ["n1", "", ""])
        #expect(fewer.advice == "\(path).notes: the notes file has 1 pages, the document 3: pages 2-3 have no notes")
    }

    @Test("a room's notes: file replaces the one beside the document and a markdown document's comments, which stay out of its text")
    func configuredNotes() throws {
        let dir = TempDir()
        let text = dir.write("t.txt", "1\u{0C}2")
        _ = dir.write("t.txt.notes", "beside")
        let elsewhere = dir.write("other.notes", "from config\u{0C}two")
        #expect(Self.notes(try Document.open(.file(text), pagination: .formFeed, notes: elsewhere)) == ["from config", "two"])
        let deck = dir.write("d.md", "# A\n<!-- notes: comment -->\n---\n# B\n")
        let mdNotes = dir.write("d.notes", "from config\n\n---\n\nsplit as markdown\n")
        let doc = try Document.open(.file(deck), pagination: .markdown, notes: mdNotes)
        #expect(Self.notes(doc) == ["from config", "split as markdown"])
        #expect(try DocumentSplitTests.pages(doc) == ["# A\n", "# B\n"])
        let missing = try Document.open(.file(text), pagination: .formFeed, notes: dir.path + "/nope.notes")
        #expect(missing.notes.isEmpty && missing.advice == nil, "a missing notes file is no notes, as beside the document")
    }

    @Test("a markdown file split at --- lines is not parsed: its notes comments are page text, and the advice says so")
    func unparsedMarkdown() throws {
        let dir = TempDir()
        let path = dir.write("s.md", "# A\n<!--  speaker_note: x -->\n---\n# B\n")
        let doc = try Document.open(.file(path), pagination: .separator("---"))
        #expect(try DocumentSplitTests.pages(doc) == ["# A\n<!--  speaker_note: x -->\n", "# B\n"])
        #expect(doc.advice?.hasPrefix("its <!-- notes: --> comments are page text here") == true, "\(doc.advice ?? "nil")")
        let plain = try Document.open(.file(dir.write("p.md", "# A\n<!-- pause -->\n---\n# B\n")), pagination: .separator("---"))
        #expect(plain.advice == nil)
        var probe = NotesCommentProbe()
        probe.consume(Array("text <!-".utf8))
        probe.consume(Array("- notes: across chunks -->".utf8))
        #expect(probe.found, "a comment split between two chunks")
    }

    @Test("an unterminated notes comment hides the rest from the audience and is in the advice")
    func unterminated() throws {
        let dir = TempDir()
        let doc = try Document.open(.file(dir.write("u.md", "# One\n\n<!-- notes: open\n\n---\n\n# Two\n")), pagination: .markdown)
        #expect(doc.pageCount == 1)
        #expect(try DocumentSplitTests.pages(doc) == ["# One\n\n"])
        #expect(doc.advice == "the notes comment at line 3 has no -->: everything after it is notes")
    }
}

extension Document {
    /// The number of lines of page `page` as TEXT counts them.
    func text(lines page: Int) -> Int {
        let bytes = (try? text(of: PageNumber(page)!, limit: 1 << 20).bytes) ?? []
        return bytes.split(separator: 0x0A, omittingEmptySubsequences: false).count - (bytes.last == 0x0A ? 1 : 0)
    }
}
