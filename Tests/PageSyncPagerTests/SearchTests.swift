import Testing
import PageSyncPager

private let on = SearchHighlighter.markOn
private let off = SearchHighlighter.markOff

@Suite struct SearchPatternTests {
    @Test func smartCase() throws {
        let lower = try SearchPattern("apple")
        #expect(lower.ignoresCase)
        #expect(lower.matches("An APPLE"))
        #expect(lower.matches("apple pie"))
        #expect(!lower.matches("pear"))
        let upper = try SearchPattern("Apple")
        #expect(!upper.ignoresCase)
        #expect(upper.matches("an Apple"))
        #expect(!upper.matches("an apple"))
        #expect(!upper.matches("an APPLE"))
    }

    @Test func escapesDoNotCountAsUppercase() throws {
        #expect(!SearchPattern.hasUppercase(#"\S+\W\B\D"#))
        #expect(SearchPattern.hasUppercase(#"\sA"#))
        #expect(SearchPattern.hasUppercase("É"))
        #expect(!SearchPattern.hasUppercase("é1_"))
        let p = try SearchPattern(#"x\Sy"#)
        #expect(p.ignoresCase)
        #expect(p.matches("X-Y"))
    }

    @Test func regularExpressions() throws {
        let p = try SearchPattern(#"^ab+c$"#)
        #expect(p.matches("abbbc"))
        #expect(!p.matches("xabc"))
        let alt = try SearchPattern("cat|dog")
        #expect(alt.matches("hot dog"))
        #expect(try SearchPattern(#"\d{3}"#).matches("call 555 now"))
        #expect(try SearchPattern(#"a\.b"#).matches("a.b"))
        #expect(try !SearchPattern(#"a\.b"#).matches("axb"))
    }

    @Test func badPatternsGetOneLineMessages() {
        for bad in ["(", "[a-", "a{2,1}", "*x", #"\"#] {
            #expect(throws: SearchPatternError.self) { try SearchPattern(bad) }
            do { _ = try SearchPattern(bad) } catch {
                #expect(error.message.hasPrefix("bad pattern \(bad): "))
                #expect(!error.message.contains("\n"))
            }
        }
        #expect(throws: SearchPatternError(message: "empty pattern")) { try SearchPattern("") }
    }

    @Test func matchesSeeTheVisibleTextOnly() throws {
        // An SGR sequence between the letters does not hide the word; escape parameters are not text.
        let p = try SearchPattern("red")
        #expect(p.matches("\u{1B}[1mre\u{1B}[0md"))
        #expect(try !SearchPattern("31m").matches("\u{1B}[31mx"))
        // Overstrike (man pages) is matched as its letters.
        #expect(try SearchPattern("name").matches("N\u{8}Na\u{8}am\u{8}me\u{8}e"))
    }

    @Test func rangesAreCharacterOffsetsAndSkipEmptyMatches() throws {
        #expect(try SearchPattern("an").ranges(inPlain: "banana") == [1..<3, 3..<5])
        #expect(try SearchPattern("x*").ranges(inPlain: "axxb") == [1..<3])
        #expect(try SearchPattern("^").ranges(inPlain: "abc") == [])
        #expect(try SearchPattern("é").ranges(inPlain: "café é") == [3..<4, 5..<6])
        #expect(try SearchPattern("中").ranges(inPlain: "中文中") == [0..<1, 2..<3])
    }
}

@Suite struct SearchHighlighterTests {
    @Test func marksEveryMatch() throws {
        let p = try SearchPattern("an")
        #expect(SearchHighlighter.highlight("banana", p) == "b\(on)an\(off)\(on)an\(off)a")
        #expect(SearchHighlighter.highlight("nothing", try SearchPattern("zz")) == "nothing")
    }

    @Test func caseSmartMarks() throws {
        #expect(SearchHighlighter.highlight("Apple apple", try SearchPattern("apple"))
                == "\(on)Apple\(off) \(on)apple\(off)")
        #expect(SearchHighlighter.highlight("Apple apple", try SearchPattern("Apple")) == "\(on)Apple\(off) apple")
    }

    @Test func keepsTheDocumentsStylesAndSurvivesItsReset() throws {
        let line = "\u{1B}[1mbold\u{1B}[0m word"
        let out = SearchHighlighter.highlight(line, try SearchPattern("ld w"))
        #expect(out == "\u{1B}[1mbo\(on)ld\u{1B}[0m\(on) w\(off)ord")
        // A mark inside the document's colour ends by restoring that colour.
        #expect(SearchHighlighter.highlight("\u{1B}[31mred x red", try SearchPattern("x"))
                == "\u{1B}[31mred \(on)x\(off)\u{1B}[31m red")
    }

    @Test func resultIsSanitizedAndLaysOutAtTheSameWidth() throws {
        let line = "a\tb\u{1B}]0;title\u{7}c\u{1B}[2Jd"
        let out = SearchHighlighter.highlight(line, try SearchPattern("b"))
        #expect(!out.contains("\u{1B}]"))
        #expect(!out.contains("\u{1B}[2J"))
        #expect(Sanitizer.plainText(out) == Sanitizer.plainText(line))
        let rows = Layout.rows(lines: [out], width: 40, wrap: true)
        #expect(rows[0].width == Layout.rows(lines: [line], width: 40, wrap: true)[0].width)
    }

    @Test func caretNotationGlyphs() throws {
        // "^A" is one glyph of two characters; a match inside it marks the whole glyph.
        let out = SearchHighlighter.highlight("x\u{1}y", try SearchPattern("A"))
        #expect(out == "x\(on)^A\(off)y")
        #expect(SearchHighlighter.highlight("x\u{1}y", try SearchPattern("y")) == "x^A\(on)y\(off)")
    }

    @Test func dumbTerminalsGetNoMarksButNoColorDoes() throws {
        let p = try SearchPattern("an")
        #expect(SearchHighlighter.highlight("banana", p, colors: .none) == "banana")
        #expect(SearchHighlighter.highlight("banana", p, colors: .noColor) == "b\(on)an\(off)\(on)an\(off)a")
    }
}

@Suite struct PageSearchTests {
    let lines = ["alpha", "beta", "gamma", "alphabet", "delta"]

    @Test func findForwardAndBackward() throws {
        let p = try SearchPattern("alpha")
        #expect(PageSearch.find(p, in: lines, from: -1, forward: true) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: true) == 3)
        #expect(PageSearch.find(p, in: lines, from: 3, forward: true) == nil)
        #expect(PageSearch.find(p, in: lines, from: lines.count, forward: false) == 3)
        #expect(PageSearch.find(p, in: lines, from: 3, forward: false) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: false) == nil)
        #expect(PageSearch.find(p, in: [], from: -1, forward: true) == nil)
        #expect(PageSearch.find(p, in: lines, from: 99, forward: false) == 3)
        #expect(PageSearch.find(p, in: lines, from: -7, forward: true) == 0)
    }

    @Test func findSkipsFilteredLines() throws {
        let p = try SearchPattern("a$")
        let filter = try LineFilter("l")
        #expect(PageSearch.find(p, in: lines, from: -1, forward: true) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: true, filter: filter) == 4)  // beta, gamma hidden
    }

    @Test func displayFiltersAndMarks() throws {
        let shown = PageSearch.display(lines, search: try SearchPattern("ta"), filter: try LineFilter("e"))
        #expect(shown.origin == [1, 3, 4])
        #expect(shown.lines == ["be\(on)ta\(off)", "alphabet", "del\(on)ta\(off)"])
        let all = PageSearch.display(lines, search: nil, filter: nil)
        #expect(all.lines == lines)
        #expect(all.origin == [0, 1, 2, 3, 4])
        let none = PageSearch.display(lines, search: nil, filter: try LineFilter("zzz"))
        #expect(none.lines.isEmpty && none.origin.isEmpty)
        let others = PageSearch.display(lines, search: nil, filter: try LineFilter("!alpha"))
        #expect(others.lines == ["beta", "gamma", "delta"])
        #expect(others.origin == [1, 2, 4])
    }

    @Test func lineFilters() throws {
        let keep = try LineFilter("Apple")
        #expect(keep.showsMatches && keep.text == "Apple")
        #expect(keep.shows("an Apple") && !keep.shows("an apple"))
        let drop = try LineFilter("!apple")
        #expect(!drop.showsMatches && drop.text == "!apple")
        #expect(!drop.shows("An APPLE") && drop.shows("pear"))
        #expect(throws: SearchPatternError(message: "empty pattern")) { try LineFilter("!") }
        #expect(throws: SearchPatternError.self) { try LineFilter("!(") }
    }

    @Test func nextPageNeverWraps() {
        #expect(PageSearch.nextPage(after: 1, pageCount: 3, forward: true) == 2)
        #expect(PageSearch.nextPage(after: 3, pageCount: 3, forward: true) == nil)
        #expect(PageSearch.nextPage(after: 2, pageCount: 3, forward: false) == 1)
        #expect(PageSearch.nextPage(after: 1, pageCount: 3, forward: false) == nil)
        #expect(PageSearch.nextPage(after: 1, pageCount: 1, forward: true) == nil)
    }
}

@Suite struct SearchInThePagerTests {
    func long(_ n: Int) -> [String] { (1...n).map { "row \($0)" } }
    let small = PagerOptions(size: TerminalSize(columns: 40, rows: 11))

    @Test func matchesAreHighlightedOnScreen() {
        var h = Harness(hello: hello(), text: ["one apple", "two", "Apple three"], options: small)
        h.type("/apple")
        h.keys(.enter)
        let screen = h.model.screen()
        #expect(screen[0] == "one \(on)apple\(off)\u{1B}[0m")
        #expect(screen[2] == "\(on)Apple\(off) three\u{1B}[0m")
        #expect(screen[1] == "two")
        #expect(h.model.message == "/apple: line 1")
    }

    @Test func badRegexSaysSoAndKeepsThePreviousSearch() {
        var h = Harness(hello: hello(), text: ["x one", "a(b", "x two"], options: small)
        h.type("/x")
        h.keys(.enter)
        h.type("/a(b")
        h.keys(.enter)
        #expect(h.model.message?.hasPrefix("bad pattern a(b: ") == true)
        #expect(h.model.message?.contains("\n") == false)
        h.type("n")
        #expect(h.model.message == "/x: line 3")
        h.type(#"/a\(b"#)
        h.keys(.enter)
        #expect(h.model.message == #"/a\(b: line 2"#)
    }

    @Test("n past the page's last match searches on through the document without moving, then shows the match detached")
    func nGoesOnToTheNextMatchThroughTheDocument() {
        var lines = long(20)
        lines[2] = "needle on page 1"
        // Wide enough for the whole status line: detached, where the room is, and the message.
        var h = Harness(hello: hello(pages: 4), text: lines, options: PagerOptions(size: TerminalSize(columns: 120, rows: 11)))
        h.type("/needle")
        h.keys(.enter)
        #expect(h.model.mode == .following)
        h.type("n")
        // Page 1 has no further match: page 2 is asked for and searched; the view stays.
        #expect(h.model.mode == .following)
        #expect(h.sent() == ["TEXT 2"])
        #expect(h.model.message == "/needle: searching page 2 of 4… (Esc stops)")
        h.server(textReply(page: 2, pages: 4, ["nothing here"]))
        #expect(h.model.mode == .following)
        #expect(h.sent() == ["TEXT 3"])
        var page3 = long(30)
        page3[24] = "a Needle, a needle"
        h.server(textReply(page: 3, pages: 4, page3))
        #expect(h.model.mode == .detached(viewPage: 3))
        #expect(h.model.message == "/needle: page 3 line 25 · the search detached you (F follows)")
        #expect(h.model.statusText().contains("detached · room on 1/4 · F to follow"))
        #expect(h.model.scrollOffset == 20)  // 30 rows, 10 visible: clamped
        #expect(!h.sent().contains { $0.hasPrefix("NEXT") || $0.hasPrefix("GOTO") })  // the room never moved
        // Past the last page: not found, and the view stays on the match, as in less.
        h.type("n")
        #expect(h.sent() == ["TEXT 4"])
        h.server(textReply(page: 4, pages: 4, ["end"]))
        #expect(h.model.message == "pattern not found: needle (pages 3–4)")
        #expect(h.model.mode == .detached(viewPage: 3))
        #expect(h.model.scrollOffset == 20)
        // N goes back from that match: page 2 has none, page 1 has one (both held: nothing asked).
        h.type("N")
        #expect(h.sent() == [])
        #expect(h.model.mode == .detached(viewPage: 1))
        #expect(h.model.message == "/needle: page 1 line 3 · the search detached you (F follows)")
        h.type("F")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 1)
    }

    @Test("/ says where the next match is on another page, and n goes there")
    func aNewSearchSaysWhereTheMatchIs() {
        var h = Harness(hello: hello(page: 2, pages: 3), text: ["abc"], options: PagerOptions(size: TerminalSize(columns: 120, rows: 11)))
        h.type("/zzz")
        h.keys(.enter)
        #expect(h.sent() == ["TEXT 3"])
        h.server(textReply(page: 3, pages: 3, ["one", "a zzz here"]))
        #expect(h.model.message == "/zzz: not on this page; on page 3, line 2 · n goes there")
        #expect(h.model.mode == .following)
        h.type("n")
        #expect(h.sent() == [])
        #expect(h.model.mode == .detached(viewPage: 3))
        #expect(h.model.message == "/zzz: page 3 line 2 · the search detached you (F follows)")
        // Backward, from page 2: page 1 is asked for; not found there.
        var i = Harness(hello: hello(page: 2, pages: 3), text: ["abc"], options: small)
        i.type("?zzz")
        i.keys(.enter)
        #expect(i.sent() == ["TEXT 1"])
        i.server(textReply(page: 1, pages: 3, ["no"]))
        #expect(i.model.message == "pattern not found: zzz (pages 1–2)")
        #expect(i.model.mode == .following)
    }

    @Test func aSearchThatFindsNothingLeavesYouWhereYouWere() {
        // Following on page 2, scrolled down: the search looks through pages 3 and 4 and finds nothing.
        var h = Harness(hello: hello(page: 2, pages: 4), text: long(30), options: small)
        h.keys(.char("5"), .char("j"))
        #expect(h.model.scrollOffset == 5)
        h.type("/zzz")
        h.keys(.enter)
        #expect(h.sent() == ["TEXT 3"])
        h.server(textReply(page: 3, pages: 4, long(12)))
        h.server(textReply(page: 4, pages: 4, long(12)))
        #expect(h.model.message == "pattern not found: zzz (pages 2–4)")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 2)
        #expect(h.model.scrollOffset == 5)
        #expect(h.model.screen()[0] == "row 6")
    }

    @Test func aSearchThroughMorePagesThanTheCacheHoldsKeepsYourPage() {
        // 30 pages: the search passes more pages than the pager keeps (24); the page on screen stays held.
        var h = Harness(hello: hello(page: 2, pages: 30), text: long(30), options: small)
        h.keys(.char("5"), .char("j"))
        h.type("/zzz")
        h.keys(.enter)
        for page in 3...30 { h.server(textReply(page: page, pages: 30, long(12))) }
        #expect(h.model.message == "pattern not found: zzz (pages 2–30)")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 2)
        #expect(!h.sent().contains("TEXT 2"))
        #expect(h.model.scrollOffset == 5)
        #expect(h.model.screen()[0] == "row 6")
    }

    @Test func aSearchGoesOnWhileTheRoomMoves() {
        var h = Harness(hello: hello(page: 2, pages: 4), text: long(30), options: small)
        h.type("/zzz")
        h.keys(.enter)
        #expect(h.sent() == ["TEXT 3"])
        h.server(pageEvent(page: 4, pages: 4, version: 1))  // the presenter turned meanwhile
        #expect(h.sent() == ["TEXT 4"])  // for the screen
        h.server(textReply(page: 3, pages: 4, long(12)))
        #expect(h.sent() == ["TEXT 4"])  // for the search: the screen's is not here yet
        h.server(textReply(page: 4, pages: 4, long(12)))
        h.server(textReply(page: 4, pages: 4, long(12)))
        #expect(h.model.message == "pattern not found: zzz (pages 2–4)")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 4)
    }

    @Test func aBackwardSearchStartsAtTheBottomOfTheScreenAsInLess() {
        // A slide that fits the screen: ?word finds the word you can see (it said "not on this page").
        var slide = Harness(hello: hello(page: 2, pages: 3), text: ["one", "two apple", "three"], options: small)
        slide.type("?apple")
        slide.keys(.enter)
        #expect(slide.model.message == "?apple: line 2", "a ? search is reported as typed")
        #expect(slide.model.mode == .following)
        #expect(slide.sent() == [])
        // A long page: the last match on screen or above it, not only above the top line.
        var lines = long(40)
        for i in [3, 15, 25] { lines[i] = "apple \(i + 1)" }
        var h = Harness(hello: hello(pages: 1), text: lines, options: small)  // 10 content rows
        h.keys(.char("1"), .char("2"), .char("j"))  // lines 13-22 on screen
        h.type("?apple")
        h.keys(.enter)
        #expect(h.model.message == "?apple: line 16")
        h.type("N")  // the other way: forward from that match
        #expect(h.model.message == "?apple: line 26")
        h.type("n")
        #expect(h.model.message == "?apple: line 16")
        h.type("n")
        #expect(h.model.message == "?apple: line 4")
    }

    @Test func nAndNGoOnFromTheScreenOnceYouHaveScrolled() {
        // As in less: n and N continue from the match while the screen stays on it; once you
        // scroll, they start from the screen's top line instead of jumping back to the old match.
        var lines = long(40)
        for i in [4, 14, 27, 34] { lines[i] = "mark \(i + 1)" }
        var h = Harness(hello: hello(pages: 1), text: lines, options: small)  // 10 content rows
        h.type("/mark")
        h.keys(.enter)
        #expect(h.model.message == "/mark: line 5")
        h.type("n")
        #expect(h.model.message == "/mark: line 15")
        h.keys(.char(" "), .char(" "))  // two screens down from line 15: the last screen, lines 31-40
        #expect(h.model.scrollOffset == 30)
        h.type("N")
        #expect(h.model.message == "/mark: line 28")  // the match above the screen, not above line 15
        h.type("g")
        h.type("n")
        #expect(h.model.message == "/mark: line 5")  // from the top, not after line 28
        h.keys(.char("1"), .char("8"), .char("j"))  // 18 lines down from line 5: lines 23-32
        h.type("n")
        #expect(h.model.message == "/mark: line 28")
        h.type("n")
        #expect(h.model.message == "/mark: line 35")
    }

    @Test func notFoundOnTheOnlyPage() {
        var h = Harness(hello: hello(pages: 1), text: ["abc"], options: small)
        h.type("/zzz")
        h.keys(.enter)
        #expect(h.model.message == "pattern not found: zzz")
        #expect(h.model.mode == .following)
        #expect(h.sent() == [])
    }

    @Test("scrolling leaves a search going through pages; Esc stops it")
    func escStopsADocumentSearch() {
        var h = Harness(hello: hello(pages: 3), text: ["abc"], options: small)
        h.type("/zzz")
        h.keys(.enter)
        #expect(h.sent() == ["TEXT 2"])
        h.type("j")
        h.server(textReply(page: 2, pages: 3, ["no"]))
        #expect(h.sent() == ["TEXT 3"])
        h.keys(.escape)
        #expect(h.model.message == "search stopped at page 3 of 3")
        h.server(textReply(page: 3, pages: 3, ["zzz"]))
        #expect(h.model.mode == .following)
        #expect(h.model.message == "search stopped at page 3 of 3")
        #expect(h.sent() == [])
    }

    @Test func filterShowsOnlyMatchingLinesAndEmptyClears() {
        var h = Harness(hello: hello(), text: ["apple", "pear", "APPLE pie", "plum"], options: small)
        h.type("&apple")
        #expect(h.model.statusText() == "&apple")
        h.keys(.enter)
        #expect(Array(h.model.screen().prefix(3)) == ["apple", "APPLE pie", "~"])
        #expect(h.model.message == "&apple: only matching lines show (& Enter: all)")
        // A search moves among the shown lines only.
        h.type("/p")
        h.keys(.enter)
        #expect(h.model.message == "/p: line 1")
        h.type("n")
        #expect(h.model.message == "/p: line 3")
        h.type("&")
        h.keys(.enter)
        #expect(h.model.message == "filter off: every line shows")
        #expect(Sanitizer.plainText(h.model.screen()[1]) == "pear")
        h.type("&!apple")
        h.keys(.enter)
        #expect(h.model.message == "&!apple: only lines that do not match show (& Enter: all)")
        #expect(Array(h.model.screen().prefix(3)).map { Sanitizer.plainText($0) } == ["pear", "plum", "~"])
        #expect(h.sent() == [])
    }

    @Test func filterWithNoMatchAndBadFilter() {
        var h = Harness(hello: hello(), text: ["apple"], options: small)
        h.type("&zzz")
        h.keys(.enter)
        #expect(h.model.message == "&zzz: no line on this page matches")
        #expect(h.model.screen()[0] == "~")
        h.type("&[")
        h.keys(.enter)
        #expect(h.model.message?.hasPrefix("bad pattern [: ") == true)
        h.type("&")
        h.keys(.backspace)
        #expect(h.model.statusText() != "&")
    }
}
