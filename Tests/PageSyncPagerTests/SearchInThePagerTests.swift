import Testing
import PageSyncPager

private let on = SearchHighlighter.markOn
private let off = SearchHighlighter.markOff

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
