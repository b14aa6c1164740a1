#if canImport(Glibc)
import Glibc
#endif
import Testing

import PageSyncMarkdown

private func separate(_ text: String) -> (pages: [String], notes: [String], unterminated: Int?) {
    let bytes = Array(text.utf8)
    let s = MarkdownNotes.separate(bytes, split: MarkdownPagination.split(bytes, mode: .structure))
    return (s.pages.map { String(decoding: s.audience[$0], as: UTF8.self) },
            s.notes.map { String(decoding: $0, as: UTF8.self) }, s.unterminatedLine)
}

/// Speaker notes in markdown comments: each page's notes, and pages' text without them.
@Suite struct MarkdownNotesTests {
    @Test("notes: and speaker_note: comments are their page's notes and no page's text")
    func basic() {
        let r = separate("# One\n\ntext\n\n<!-- notes: first -->\n\n---\n\n# Two\n<!-- speaker_note: second -->\nafter\n\n---\n# Three\n")
        #expect(r.pages == ["# One\n\ntext\n\n\n", "\n# Two\nafter\n\n", "# Three\n"], "\(r.pages)")
        #expect(r.notes == ["first", "second", ""])
        #expect(r.unterminated == nil)
    }

    @Test("multi-line notes: presenterm's | block loses its indentation; two notes on a page join with a blank line")
    func multiline() {
        let r = separate("# A\n<!--\nspeaker_note: |\n  line one\n    indented\n  line two\n-->\n<!-- notes: more -->\n")
        #expect(r.pages == ["# A\n"])
        #expect(r.notes == ["line one\n  indented\nline two\n\nmore"], "\(r.notes)")
    }

    @Test("other comments, inline comments and comments in lists or code stay text")
    func notNotes() {
        let text = "# A\n<!-- pause -->\nsee <!-- notes: inline --> here\n\n- item\n\n  <!-- notes: in a list -->\n\n```\n<!-- notes: code -->\n```\n"
        let r = separate(text)
        #expect(r.pages == [text])
        #expect(r.notes == [""])
    }

    @Test("an unterminated notes comment is notes to the end, and its line is reported")
    func unterminated() {
        let r = separate("---\ntitle: t\n---\n# A\n\n<!-- notes: never closed\n\n---\n\n# B\n")
        #expect(r.pages == ["# A\n\n"], "\(r.pages)")
        #expect(r.notes == ["never closed\n\n---\n\n# B"], "\(r.notes)")
        #expect(r.unterminated == 6)
    }

    @Test("CR LF line ends: the same pages and notes")
    func crlf() {
        let r = separate("# A\r\n<!-- notes: a\r\n  b -->\r\n---\r\n# B\r\n")
        #expect(r.pages == ["# A\r\n", "# B\r\n"])
        #expect(r.notes == ["a\nb", ""])
    }

    @Test("isNotes: the keyword after <!-- and blanks, nothing else")
    func isNotes() {
        #expect(MarkdownNotes.isNotes("<!-- notes: x -->"))
        #expect(MarkdownNotes.isNotes("<!--speaker_note:x-->"))
        #expect(MarkdownNotes.isNotes("  <!--\n  speaker_note: |\n  x\n-->"))
        #expect(!MarkdownNotes.isNotes("<!-- end_slide -->"))
        #expect(!MarkdownNotes.isNotes("<!-- a notes: x -->"))
        #expect(!MarkdownNotes.isNotes("<div>notes:</div>"))
    }

    @Test("the presenterm test deck: five slides, notes on 1, 2, 3 and 5, none in any slide's text")
    func deck() throws {
        let r = separate(try #require(Self.deckText()))
        #expect(r.pages.count == 5)
        #expect(r.notes == [
            "Ask who has given a talk from a terminal.",
            "Draw the coordinator on the whiteboard.\nMention that versions survive restarts.",
            "SECRET-NOTE-THREE: slow down here.", "", "Thank the organisers.",
        ], "\(r.notes)")
        for page in r.pages { #expect(!page.contains("speaker_note") && !page.contains("notes:"), "\(page)") }
        #expect(r.pages[2].contains("<!-- pause -->"), "presenterm's other commands stay")
    }

    /// Tests/Decks/speaker-notes.md, the repository's presenterm deck with notes.
    static func deckText() -> String? {
        let path = "/" + String(#filePath).split(separator: "/").dropLast(2).joined(separator: "/") + "/Decks/speaker-notes.md"
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let n = fread(&buffer, 1, buffer.count, file), n > 0 { bytes += buffer[0..<n] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
