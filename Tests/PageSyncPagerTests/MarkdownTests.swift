import Testing
import PageSyncPager
import PageSyncMarkdown

private let reset = "\u{1B}[0m"
private let bold = "\u{1B}[1m"

@Suite struct CmarkParserTests {
    @Test func blocksAndInlines() {
        let blocks = CmarkParser.parse("""
            # Title

            Some *em* and **strong**, `code` and [a link](https://x.example).
            next line

            > quoted

            - one
            - two

            3. three
            4. four

            ```swift
            let x = 1
            ```

            ***
            """)
        #expect(blocks == [
            .heading(level: 1, [.text("Title")]),
            .paragraph([.text("Some "), .emphasis([.text("em")]), .text(" and "), .strong([.text("strong")]), .text(", "),
                        .code("code"), .text(" and "), .link(url: "https://x.example", [.text("a link")]), .text("."),
                        .softBreak, .text("next line")]),
            .blockQuote([.paragraph([.text("quoted")])]),
            .list(ordered: false, start: 0, tight: true, items: [[.paragraph([.text("one")])], [.paragraph([.text("two")])]]),
            .list(ordered: true, start: 3, tight: true, items: [[.paragraph([.text("three")])], [.paragraph([.text("four")])]]),
            .code(info: "swift", lines: ["let x = 1"]),
            .thematicBreak,
        ])
    }

    /// cmark-gfm shares the extensions' special characters between parsers; parses on several
    /// threads at once must each still see strikethrough and tables.
    @Test func parsesOnManyThreadsAtOnceKeepTheirExtensions() async {
        let markdown = "| x |\n|---|\n| ~~a~~ |\n\n~~b~~ and ~~c~~\n"
        let expected = CmarkParser.parse(markdown)
        #expect(expected.count == 2 && "\(expected)".split(separator: "strikethrough", omittingEmptySubsequences: false).count == 4, "\(expected)")
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<2_000).reduce(0) { count, _ in count + (CmarkParser.parse(markdown) == expected ? 0 : 1) } }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0, "\(mismatches) of 16,000 parses on 8 threads differed")
    }

    @Test func gfmTablesAndStrikethrough() {
        let blocks = CmarkParser.parse("""
            | name | n |
            |:-----|--:|
            | ~~a~~ | 1 |
            | b | 22 |
            """)
        #expect(blocks == [
            .table(alignments: [.left, .right], header: [[.text("name")], [.text("n")]],
                   rows: [[[.strikethrough([.text("a")])], [.text("1")]], [[.text("b")], [.text("22")]]]),
        ])
    }

    @Test func emptyAndOddInput() {
        #expect(CmarkParser.parse("") == [])
        #expect(CmarkParser.parse("<div>\nhi\n</div>") == [.html(lines: ["<div>", "hi", "</div>"])])
        // Invalid UTF-8 cannot reach here (Swift strings are valid); NUL is replaced by cmark.
        #expect(!CmarkParser.parse("a\u{0}b").isEmpty)
    }
}

@Suite struct MarkdownRendererTests {
    @Test func headings() {
        #expect(MarkdownRenderer.render(markdown: "# Title") == ["\u{1B}[1;4mTitle\(reset)", "═════"])
        #expect(MarkdownRenderer.render(markdown: "## Sub") == ["\(bold)Sub\(reset)", "───"])
        #expect(MarkdownRenderer.render(markdown: "### Small") == ["\(bold)Small\(reset)"])
        #expect(MarkdownRenderer.render(markdown: "### Small", colors: .none) == ["### Small"])
        #expect(MarkdownRenderer.render(markdown: "# 中文", colors: .none) == ["中文", "════"])
    }

    @Test func emphasisNestsAndRestoresOuterStyles() {
        let lines = MarkdownRenderer.render(markdown: "**bold *both* bold**")
        #expect(lines == ["\(bold)bold \u{1B}[3mboth\(reset)\(bold) bold\(reset)"])
        #expect(MarkdownRenderer.render(markdown: "**bold *both* bold**", colors: .none) == ["**bold *both* bold**"])
    }

    @Test func stylesNeverLeakPastALine() {
        let lines = MarkdownRenderer.render(markdown: "*one\ntwo*")
        #expect(lines == ["\u{1B}[3mone\(reset)", "\u{1B}[3mtwo\(reset)"])
        for line in MarkdownRenderer.render(markdown: "# a **b\nc** d\n\n> *x\n> y*") where line.contains("\u{1B}[") {
            #expect(line.hasSuffix(reset), "\(line.debugDescription)")
        }
    }

    @Test func codeSpansAndBlocks() {
        #expect(MarkdownRenderer.render(markdown: "use `ls -l` here") == ["use \u{1B}[36mls -l\(reset) here"])
        #expect(MarkdownRenderer.render(markdown: "use `ls -l` here", colors: .noColor) == ["use `ls -l` here"])
        #expect(MarkdownRenderer.render(markdown: "```\na\n\nb\n```", colors: .none) == ["    a", "", "    b"])
        #expect(MarkdownRenderer.render(markdown: "```\na\n```") == ["    \u{1B}[33ma\(reset)"])
    }

    @Test func listsAndQuotes() {
        #expect(MarkdownRenderer.render(markdown: "- a\n- b\n  - c\n    - d", colors: .none)
                == ["• a", "• b", "  ◦ c", "    ▪ d"])
        #expect(MarkdownRenderer.render(markdown: "9. nine\n10. ten", colors: .none) == [" 9. nine", "10. ten"])
        #expect(MarkdownRenderer.render(markdown: "- a\n\n- b", colors: .none) == ["• a", "", "• b"])
        #expect(MarkdownRenderer.render(markdown: "- first\n  line two", colors: .none) == ["• first", "  line two"])
        #expect(MarkdownRenderer.render(markdown: "> a\n>\n> b", colors: .none) == ["│ a", "│", "│ b"])
        #expect(MarkdownRenderer.render(markdown: "> - x\n> > y", colors: .none) == ["│ • x", "│", "│ │ y"])
    }

    @Test func blocksAreSeparatedByOneEmptyLine() {
        #expect(MarkdownRenderer.render(markdown: "a\n\n\n\nb\n***\nc", colors: .none)
                == ["a", "", "b", "", String(repeating: "─", count: MarkdownRenderer.ruleWidth), "", "c"])
    }

    @Test func linksAndImages() {
        #expect(MarkdownRenderer.render(markdown: "[x](http://a)", colors: .none) == ["x <http://a>"])
        #expect(MarkdownRenderer.render(markdown: "<http://a>", colors: .none) == ["http://a"])
        #expect(MarkdownRenderer.render(markdown: "[x](http://a)") == ["\u{1B}[4mx\(reset) <http://a>"])
        #expect(MarkdownRenderer.render(markdown: "![cat](c.png)", colors: .none) == ["[image: cat] <c.png>"])
    }

    @Test func tablesArePaddedAndAligned() {
        let md = "| name | n | mid |\n|:--|--:|:-:|\n| apple | 1 | x |\n| fig | 22 | yyy |"
        #expect(MarkdownRenderer.render(markdown: md, colors: .none) == [
            "name  │  n │ mid",
            "──────┼────┼────",
            "apple │  1 │  x",
            "fig   │ 22 │ yyy",
        ])
        let styled = MarkdownRenderer.render(markdown: md)
        #expect(styled[0].hasPrefix("\(bold)name\(reset)"))
        #expect(Sanitizer.plainText(styled[2]) == "apple │  1 │  x")
        // Wide characters count two columns; a short row is padded with empty cells.
        #expect(MarkdownRenderer.render(markdown: "| a | b |\n|---|---|\n| 中 |", colors: .none)
                == ["a  │ b", "───┼──", "中 │"])
    }

    @Test func dumbTerminalsGetNoEscapes() {
        let md = "# T\n\n*e* **s** ~~x~~ `c` [l](u)\n\n> q\n\n```\nk\n```\n\n| a |\n|---|\n| b |"
        for line in MarkdownRenderer.render(markdown: md, colors: .none) {
            #expect(!line.contains("\u{1B}"), "\(line.debugDescription)")
        }
        #expect(MarkdownRenderer.render(markdown: "*e* **s** ~~x~~ `c`", colors: .none) == ["*e* **s** ~~x~~ `c`"])
    }

    @Test func hostileTextStaysText() {
        // Escapes in the document pass through the renderer and are sanitized by Layout later, like any text.
        let lines = MarkdownRenderer.render(markdown: "x\u{1B}]0;t\u{7}y")
        let rows = Layout.rows(lines: lines, width: 40, wrap: true)
        #expect(!rows[0].text.contains("\u{1B}]"))
    }
}

@Suite struct MarkdownChoiceTests {
    @Test func byNameOrForced() {
        #expect(MarkdownChoice.auto.rendersMarkdown(file: "slides.md"))
        #expect(MarkdownChoice.auto.rendersMarkdown(file: "A.MARKDOWN"))
        #expect(!MarkdownChoice.auto.rendersMarkdown(file: "notes.txt"))
        #expect(!MarkdownChoice.auto.rendersMarkdown(file: "-"))
        #expect(!MarkdownChoice.auto.rendersMarkdown(file: ".md"))
        #expect(!MarkdownChoice.auto.rendersMarkdown(file: nil))
        #expect(MarkdownChoice.always.rendersMarkdown(file: "notes.txt"))
        #expect(MarkdownChoice.always.rendersMarkdown(file: nil))
        #expect(!MarkdownChoice.never.rendersMarkdown(file: "slides.md"))
    }
}

@Suite struct MarkdownInThePagerTests {
    let small = PagerOptions(size: TerminalSize(columns: 40, rows: 11))

    func helloFile(_ file: String) -> String { hello() + " file=\(file)" }

    @Test func mdDocumentsAreRendered() {
        var h = Harness(hello: helloFile("slides.md"), text: ["# Title", "", "- *one*"], options: small)
        #expect(h.model.room?.file == "slides.md")
        let screen = h.model.screen()
        // (Layout ends every styled row with one more reset.)
        #expect(screen[0] == "\u{1B}[1;4mTitle\(reset)\(reset)")
        #expect(screen[1] == "═════")
        #expect(screen[3] == "• \u{1B}[3mone\(reset)\(reset)")
    }

    @Test func plainDocumentsAndPlainChoiceShowTheSource() {
        var h = Harness(hello: helloFile("notes.txt"), text: ["# Title"], options: small)
        #expect(h.model.screen()[0] == "# Title")
        var options = small
        options.markdown = .never
        var p = Harness(hello: helloFile("slides.md"), text: ["# Title"], options: options)
        #expect(p.model.screen()[0] == "# Title")
        options.markdown = .always
        var m = Harness(hello: helloFile("notes.txt"), text: ["# Title"], options: options)
        #expect(m.model.screen()[0] == "\u{1B}[1;4mTitle\(reset)\(reset)")
    }

    @Test func dumbTerminalGetsReadableMarkdown() {
        var options = small
        options.colors = .none
        var h = Harness(hello: helloFile("slides.md"), text: ["### Three", "**b** `c`"], options: options)
        let screen = h.model.screen()
        #expect(screen[0] == "### Three")
        #expect(screen[2] == "**b** `c`")
        #expect(!h.model.frame().contains("\u{1B}[1m"))
    }

    @Test func searchSeesTheRenderedLines() {
        var h = Harness(hello: helloFile("slides.md"), text: ["# Title", "", "text *here*"], options: small)
        h.type("/here")
        h.keys(.enter)
        #expect(h.model.message == "/here: line 4")  // the rendered page: title, rule, empty line, text
        #expect(h.model.screen()[3].contains(SearchHighlighter.markOn + "here"))
    }
}
