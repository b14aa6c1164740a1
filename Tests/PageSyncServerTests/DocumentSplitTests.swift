import PageSyncCore
import Testing

import PageSyncServer

/// How the daemon's documents split: markdown by its structure (read whole, bounded), plain text
/// at man-page headings on request, and the advice logged for a document left as one page.
@Suite struct DocumentSplitTests {
    static func pages(_ doc: Document) throws -> [String] {
        try (1...doc.pageCount).map { String(decoding: try doc.text(of: PageNumber($0)!, limit: 1 << 20).bytes, as: UTF8.self) }
    }

    @Test("a deck with front matter and a fenced ---: its slides, the title, the block whole")
    func deck() throws {
        let dir = TempDir()
        let path = dir.write("talk.md", "---\ntitle: \"My  talk:\\tpart 1\"\nauthor: ann\n---\n\n# One\n\n```\n---\n```\n\n---\n\n# Two\n")
        let doc = try Document.open(.file(path), pagination: .markdown)
        let texts = try Self.pages(doc)
        #expect(texts == ["\n# One\n\n```\n---\n```\n\n", "\n# Two\n"], "\(texts)")
        #expect(doc.title == "My talk: part 1")
        #expect(doc.wireTitle == "My%20talk%3A%20part%201")
        #expect(doc.advice == nil)
        let lines = try Document.open(.file(path), pagination: .separator("---"))
        #expect(lines.pageCount == 5, "split at lines, the front matter and the fence fall apart")
        #expect(lines.title == nil)
    }

    @Test("front matter that is not YAML, or has no title, names nothing; a long title is cut")
    func titles() throws {
        let dir = TempDir()
        for front in ["title: [unclosed", "author: x", "title:\n  - a\n  - b", "title: \"\""] {
            let doc = try Document.open(.file(dir.write("a.md", "---\n\(front)\n---\nx\n")), pagination: .markdown)
            #expect(doc.title == nil, "\(front)")
        }
        let long = String(repeating: "word ", count: 40)
        let doc = try Document.open(.file(dir.write("b.md", "---\ntitle: \(long)\n---\nx\n")), pagination: .markdown)
        #expect(doc.title?.count == 80 && doc.title?.hasSuffix("…") == true)
    }

    @Test("headings: a README.md at its ## sections, a man page at its sections; the id names the split")
    func headings() throws {
        let dir = TempDir()
        let readme = dir.write("README.md", "# Title\n\nintro\n\n## A\n\na\n\n## B\n\nb\n")
        #expect(try Document.open(.file(readme), pagination: .markdown).pageCount == 3)
        #expect(try Document.open(.file(readme), pagination: .headings).pageCount == 3)
        let man = dir.write("bash.txt", "BASH(1)   x   BASH(1)\n\nNAME\n       bash\n\nSYNOPSIS\n       bash\n\nBUGS\n       many\n")
        let byHeadings = try Document.open(.file(man), pagination: .headings)
        #expect(try Self.pages(byHeadings) == ["BASH(1)   x   BASH(1)\n\nNAME\n       bash\n\n", "SYNOPSIS\n       bash\n\n", "BUGS\n       many\n"])
        #expect(try Document.open(.file(man), pagination: .formFeed).id != byHeadings.id)
    }

    @Test("one page: the advice names --split headings when it has man sections, lines:60 when long, nothing when short")
    func advice() throws {
        let dir = TempDir()
        let sections = (1...3).map { "SECTION \($0)\n" + String(repeating: "   text\n", count: 5) + "\n" }.joined()
        let man = try Document.open(.file(dir.write("m.txt", sections)), pagination: .formFeed)
        #expect(man.pageCount == 1)
        #expect(man.advice?.contains("--split headings") == true && man.advice?.contains("3 pages") == true, "\(man.advice ?? "nil")")
        let prose = try Document.open(.file(dir.write("p.txt", String(repeating: "some prose\n", count: 150))), pagination: .formFeed)
        #expect(prose.advice?.contains("one page of 150 lines") == true && prose.advice?.contains("--split lines:60") == true,
                "\(prose.advice ?? "nil")")
        #expect(try Document.open(.file(dir.write("s.txt", "short\n")), pagination: .formFeed).advice == nil)
        #expect(try Document.open(.file(dir.write("f.txt", sections + "\u{0C}x")), pagination: .formFeed).advice == nil,
                "two pages: nothing to say")
        let flat = try Document.open(.file(dir.write("flat.md", String(repeating: "prose\n", count: 120))), pagination: .markdown)
        #expect(flat.advice?.contains("no top-level break or heading") == true, "\(flat.advice ?? "nil")")
    }

    @Test("markdown over 8 MiB is streamed and split at --- lines, and the advice says so")
    func tooLarge() throws {
        let dir = TempDir()
        let slide = "# Slide\n\n" + String(repeating: "x", count: 1 << 20) + "\n"
        let path = dir.write("huge.md", Array(repeating: slide, count: 9).joined(separator: "\n---\n"))
        let doc = try Document.open(.file(path), pagination: .markdown)
        #expect(doc.pageCount == 9)
        #expect(doc.advice?.contains("split at --- lines instead") == true, "\(doc.advice ?? "nil")")
    }
}
