import PageSyncMarkdown
import Testing

/// The pages of `text` split in `mode`, as text.
private func pages(_ text: String, _ mode: MarkdownPagination.Mode = .structure) -> [String] {
    let bytes = Array(text.utf8)
    return MarkdownPagination.split(bytes, mode: mode).pages.map { String(decoding: bytes[$0], as: UTF8.self) }
}

private func trimmed(_ s: String) -> String {
    var t = Substring(s)
    while let f = t.first, f.isWhitespace { t = t.dropFirst() }
    while let l = t.last, l.isWhitespace { t = t.dropLast() }
    return String(t)
}

@Suite struct MarkdownDeckTests {
    @Test("a presenterm deck: front matter is no page, each <!-- end_slide --> ends one, setext titles and fenced --- stay")
    func presenterm() {
        let bytes = Array(Decks.presenterm.utf8)
        let split = MarkdownPagination.split(bytes, mode: .structure)
        let front = try! #require(split.frontMatter)
        #expect(String(decoding: bytes[front], as: UTF8.self).hasSuffix("author: Ann\n---\n"))
        #expect(split.cut == .breaks(count: 4))
        let texts = split.pages.map { trimmed(String(decoding: bytes[$0], as: UTF8.self)) }
        #expect(texts.count == 5, "\(texts)")
        for (text, title) in zip(texts, Decks.presentermTitles).dropLast() { #expect(text.hasPrefix(title + "\n---"), "\(text)") }
        #expect(texts.last == "<!-- jump_to_middle -->\n\nThe end\n---")
        #expect(texts[2].contains("```yaml\n---\ntheme: dark\n---\n```"), "the fenced block is whole: \(texts[2])")
        #expect(texts[3].contains("  ---") && texts[3].contains("> ***"), "a list's and a quote's rules split nothing: \(texts[3])")
        #expect(!texts.contains { $0.contains("end_slide") })
        #expect(!texts[0].contains("title:"))
    }

    @Test("a reveal.js markdown deck: --- and *** and ___ split at top level, not in code; -- (vertical) does not")
    func reveal() {
        let texts = pages(Decks.reveal).map(trimmed)
        #expect(texts.count == 5, "\(texts)")
        #expect(texts[0] == "# Slide one\n\nSome text.")
        #expect(texts[1].hasPrefix("## Slide two") && texts[1].contains("echo '\n---\n'\n```"), "\(texts[1])")
        #expect(texts[2].hasPrefix("## Slide three") && texts[2].contains("--\n\n### A vertical slide"), "\(texts[2])")
        #expect(texts[3].hasPrefix("<!-- .slide: data-background=\"#ff0000\" -->\n## Slide four"), "\(texts[3])")
        #expect(texts[4] == "## Slide five", "the break at the end leaves no blank page: \(texts)")
    }

    @Test("a README without breaks splits at its ## sections, the title and introduction first; code is whole")
    func readme() {
        let split = MarkdownPagination.split(Array(Decks.readme.utf8), mode: .structure)
        #expect(split.cut == .headings(level: 2))
        let texts = pages(Decks.readme).map(trimmed)
        #expect(texts.count == 4, "\(texts)")
        #expect(texts[0] == "# pagesync\n\nKeep many terminals on the same page of a document.")
        #expect(texts[1].hasPrefix("## Two commands") && texts[1].contains("run-daemon\n---\n```"))
        #expect(texts[2].hasPrefix("## Serving") && texts[2].contains("### A subsection"))
        #expect(texts[3] == "## Layout\n\nThe end.")
    }

    @Test("headings mode splits at headings even where there are breaks")
    func headingsMode() {
        let texts = pages(Decks.reveal, .headings).map(trimmed)
        #expect(texts.count == 5, "\(texts)")  // one #, so ## splits; the # is on the page before the first ##
        #expect(texts[0].hasPrefix("# Slide one") && texts[0].hasSuffix("---"), "\(texts[0])")
        #expect(texts[1].hasPrefix("## Slide two"))
    }

    @Test("Windows line ends: the same pages, cut at the same lines")
    func crlf() {
        let deck = Decks.reveal.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        let texts = pages(deck).map(trimmed)
        #expect(texts.count == 5, "\(texts)")
        #expect(texts[4] == "## Slide five")
        #expect(texts[1].hasPrefix("## Slide two"))
    }
}

@Suite struct MarkdownPaginationRuleTests {
    @Test("the heading level: # when two or more, else ## (under one # or none), else a lone #")
    func headingLevels() {
        func level(_ text: String) -> Int? { MarkdownPagination.headingLevel(CmarkParser.outline(Array(text.utf8)) ?? []) }
        #expect(level("# a\n# b\n## c\n") == 1)
        #expect(level("# a\n## b\n## c\n") == 2)
        #expect(level("## b\n## c\n") == 2)
        #expect(level("intro\n\n# a\n") == 1)
        #expect(level("### a\n### b\n") == nil)
        #expect(level("text\n") == nil)
        #expect(level("> # quoted\n> # quoted\n") == nil, "headings in a quote are not top-level")
        #expect(pages("### a\n\ntext\n\n### b\n") == ["### a\n\ntext\n\n### b\n"])
        #expect(pages("intro\n\n# only\n\nbody\n").map(trimmed) == ["intro", "# only\n\nbody"])
    }

    @Test("only top-level breaks: not in a fence, a list, a quote, and not a setext underline")
    func topLevelOnly() {
        #expect(pages("a\n\n---\n\nb\n").map(trimmed) == ["a", "b"])
        #expect(pages("a\n\n***\n\nb\n\n___\n\nc\n").map(trimmed) == ["a", "b", "c"])
        #expect(pages("a\n---\nb\n").count == 1, "a setext heading")
        #expect(pages("```\na\n---\nb\n```\n").count == 1)
        #expect(pages("~~~\n---\n~~~\n").count == 1)
        #expect(pages("- a\n\n  ---\n- b\n").count == 1)
        #expect(pages("> a\n>\n> ---\n").count == 1)
        #expect(pages("    ---\n").count == 1, "indented code")
        #expect(pages("a\n\n - - -\n\nb\n").count == 2, "spaced rules are rules")
    }

    @Test("end_slide in every spacing; other comments are text")
    func endSlide() {
        for comment in ["<!-- end_slide -->", "<!--end_slide-->", "  <!--   end_slide\t-->  ", "<!--\nend_slide\n-->"] {
            #expect(MarkdownPagination.isEndSlide(comment), "\(comment)")
            #expect(pages("a\n\n\(comment)\n\nb\n").map(trimmed) == ["a", "b"], "\(comment)")
        }
        for comment in ["<!-- pause -->", "<!-- end_slides -->", "<!-- end_slide --> x", "<!- end_slide -->", "end_slide"] {
            #expect(!MarkdownPagination.isEndSlide(comment), "\(comment)")
        }
        #expect(pages("<div>\n<!-- end_slide -->\n</div>\n").count == 1, "inside a larger HTML block it is not top-level")
    }

    @Test("front matter: --- to --- or ..., with a key line; otherwise the --- is the document's")
    func frontMatter() {
        func front(_ s: String) -> String? {
            let b = Array(s.utf8)
            return MarkdownPagination.frontMatter(b).map { String(decoding: b[$0], as: UTF8.self) }
        }
        #expect(front("---\ntitle: x\n---\nbody\n") == "---\ntitle: x\n---\n")
        #expect(front("---  \r\ntitle: x\r\n...\r\nbody") == "---  \r\ntitle: x\r\n...\r\n")
        #expect(front("---\ntitle: x\n---") == "---\ntitle: x\n---")
        #expect(front("---\n# Slide 1\n---\n# Slide 2\n") == nil, "no key: a deck that opens with a rule")
        #expect(front("---\ntitle: x\nno end\n") == nil, "never closed")
        #expect(front("\n---\ntitle: x\n---\n") == nil, "not on the first line")
        #expect(front("----\ntitle: x\n----\n") == nil)
        #expect(front("---\n  indented: x\nurl:http\n---\n") == nil, "a key needs a space or the line end after its colon")
        #expect(front("---\nsub_title: y\n---\n") == "---\nsub_title: y\n---\n")
        #expect(pages("---\ntitle: x\n---\n").map(trimmed) == [""], "only front matter: one empty page")
        #expect(pages("---\ntitle: x\n---\n\n---\n\n# One\n").map(trimmed) == ["# One"], "a break right after it leaves no blank page")
    }

    @Test("blank pages: dropped at the ends, kept in the middle; an empty document is one empty page")
    func blankPages() {
        #expect(pages("---\n\na\n\n---\n\n---\n\nb\n\n---\n").map(trimmed) == ["a", "", "b"])
        #expect(pages("") == [""])
        #expect(pages("\n\n").count == 1)
        let split = MarkdownPagination.split(Array("just text\n".utf8), mode: .structure)
        #expect(split.cut == .none && split.pages == [0..<10])
    }

    @Test("the decision alone: breaks cut between lines, headings start pages, offsets shift past front matter")
    func decision() {
        let body = Array("a\n---\nb\n".utf8)
        let outline = [MarkdownOutlineBlock(kind: .other, startLine: 1, endLine: 1),
                       MarkdownOutlineBlock(kind: .thematicBreak, startLine: 2, endLine: 2),
                       MarkdownOutlineBlock(kind: .other, startLine: 3, endLine: 3)]
        let split = MarkdownPagination.split(outline: outline, lines: LineStarts(body), body: body, offset: 10,
                                             mode: .structure, frontMatter: 0..<10)
        #expect(split.pages == [10..<12, 16..<18])
        #expect(split.cut == .breaks(count: 1))
    }

    @Test("line starts as cmark counts them: LF, CR LF, lone CR")
    func lineStarts() {
        #expect(LineStarts(Array("a\nb\r\nc\rd".utf8)).offsets == [0, 2, 5, 7])
        #expect(LineStarts(Array("a\n".utf8)).offsets == [0])
        #expect(LineStarts(Array("".utf8)).offsets == [0])
        #expect(LineStarts(Array("a\r\r\nb".utf8)).offsets == [0, 2, 4])
        let l = LineStarts(Array("a\nb\n".utf8))
        #expect(l.start(ofLine: 2) == 2 && l.start(ofLine: 3) == 4 && l.start(ofLine: 0) == 0)
    }
}
