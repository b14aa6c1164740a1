import PageSyncCore
import Testing
import PageSyncPager

/// The room's line and mark in the pager's model: following them, leading them, marking.
@Suite struct FocusModelTests {
    static let lines = (1...40).map { "line \($0)" }

    /// A follower (or, with `control`, a presenter) in a presenter room, or in an open room, on a
    /// 40-line page, 10 rows of which fit.
    static func harness(open: Bool = false, control: Bool = false, name: String = "bob", colors: ColorPolicy = .full) -> Harness {
        var options = PagerOptions(size: TerminalSize(columns: 40, rows: 11), colors: colors)
        options.token = control && !open ? "t" : nil
        var h = Harness(options)
        h.event(.connected)
        h.server(hello(page: 1, version: 0, control: open, name: name))
        if options.token != nil { h.server("OK AUTH control=yes") }
        h.answerTextsWith(lines)
        _ = h.sent()
        return h
    }

    static func page(_ page: Int = 1, version: UInt64, line: Int = 1, mark: String = "-", by: String = "ann") -> String {
        "PAGE room=guide page=\(page) pages=6 version=\(version) by=\(by) doc=d1 epoch=e line=\(line) mark=\(mark)"
    }

    @Test func followersPutTheRoomsLineAtTheirTopAndTheMarkInView() {
        var h = Self.harness()
        h.server(Self.page(version: 1, line: 12))
        #expect(h.model.screen()[0] == "line 12")
        h.server(Self.page(version: 2, line: 12, mark: "30-31"))  // off screen: the screen goes to it
        #expect(h.model.screen()[0].contains("line 30"))
        h.server(Self.page(version: 3, line: 5, mark: "30-31"))  // the line moves on: it wins over an older mark
        #expect(h.model.screen()[0] == "line 5")
        h.server(Self.page(version: 4, line: 38))  // clamped at the end of the page
        #expect(h.model.screen()[0] == "line 31" && h.model.screen()[9] == "line 40")
        h.server(Self.page(version: 3, line: 7))  // stale: ignored
        #expect(h.model.screen()[0] == "line 31")
        h.server(Self.page(2, version: 5))  // a page turn: line 1, no mark
        h.answerTextsWith(Self.lines)
        #expect(h.model.screen()[0] == "line 1")
    }

    @Test func scrollingAloneReadsOnYourOwnUntilFOrTheRoomsNextChange() {
        var h = Self.harness()
        h.server(Self.page(version: 1, line: 12))
        h.type("5j")
        #expect(h.model.screen()[0] == "line 17")
        #expect(h.sent() == [], "an audience never moves the room")
        #expect(h.model.statusText() == "guide · page 1/6 · room at line 12", "at 40 columns")
        h.type("F")
        #expect(h.model.screen()[0] == "line 12")
        #expect(!h.model.statusText().contains("room at line"))
        h.type("3k")
        h.server(Self.page(version: 2, line: 20))
        #expect(h.model.screen()[0] == "line 20", "the room's next LINE brings you back")
    }

    @Test func aPresenterLeadsOneLineInFlightTheNewestNext() {
        var h = Self.harness(control: true, name: "ann")
        #expect(h.model.statusText().contains("leading"))
        h.type("j")
        #expect(h.sent() == ["LINE 2 IF 0"])
        h.type("j")
        h.type("j")
        h.type("5j")
        #expect(h.sent() == [], "one in flight")
        h.server("OK page=1 pages=6 version=1 line=2 mark=-")
        #expect(h.sent() == ["LINE 9 IF 1"], "the newest, not each press")
        #expect(h.model.screen()[0] == "line 9", "its own reply never moves the leader's screen")
        h.server("ERR 409 the room changed page=1 pages=6 version=2 by=cid doc=d1 epoch=e line=3 mark=-")
        #expect(h.model.screen()[0] == "line 3", "someone else's line moves the screen, the leader's too")
        #expect(h.sent() == [], "and is not undone")
        h.type("L")
        #expect(h.model.message == "leading paused: your scrolling is your own (L leads again)")
        h.type("4j")
        #expect(h.sent() == [])
        #expect(h.model.statusText().contains("room at line 3"))
        h.type("L")
        #expect(h.sent() == ["LINE 7 IF 2"], "resuming sends where you are")
    }

    @Test func aPageTurnDropsLinesWishedForTheOldPage() {
        var h = Self.harness(control: true, name: "ann")
        h.type("j")
        h.type("j")
        #expect(h.sent() == ["LINE 2 IF 0"])
        h.server("ERR 409 the room changed page=2 pages=6 version=1 by=cid doc=d1 epoch=e line=1 mark=-")
        #expect(h.sent() == ["TEXT 2"], "no LINE for a page the room left")
    }

    @Test func markingWithACountExtendingAndClearing() {
        var h = Self.harness(control: true, name: "ann")
        h.type("4j")
        _ = h.sent()
        h.server("OK page=1 pages=6 version=1 line=5 mark=-")
        h.type("3x")
        #expect(h.sent() == ["MARK 5-7 IF 1"])
        h.server("OK page=1 pages=6 version=2 line=5 mark=5-7")
        h.type("2x")
        #expect(h.sent() == ["MARK 5-9 IF 2"], "x again at the mark's first line extends it")
        h.server("OK page=1 pages=6 version=3 line=5 mark=5-9")
        h.type("X")
        #expect(h.sent() == ["MARK - IF 3"])
        h.server("OK page=1 pages=6 version=4 line=5 mark=-")
        h.type("X")
        #expect(h.model.message == "no lines are marked")
        h.type("G")
        _ = h.sent()
        h.server("OK page=1 pages=6 version=5 line=31 mark=-")
        h.type("99x")
        #expect(h.sent() == ["MARK 31-40 IF 5"], "cut at the page's end")

        var audience = Self.harness()
        audience.type("x")
        #expect(audience.model.message == "marking lines needs control (start pagesync with --token)")
        #expect(audience.sent() == [])
    }

    @Test func marksShowInReverseVideoOrBehindAGutter() {
        var h = Self.harness()
        h.server(Self.page(version: 1, line: 1, mark: "2-3"))
        let rows = h.model.screen()
        #expect(rows[0] == "line 1")
        #expect(rows[1] == "\u{1B}[7mline 2" + String(repeating: " ", count: 34) + "\u{1B}[0m")
        #expect(rows[2].hasPrefix("\u{1B}[7mline 3"))
        #expect(rows[3] == "line 4")

        var plain = Self.harness(colors: .none)
        plain.server(Self.page(version: 1, line: 1, mark: "2"))
        #expect(plain.model.screen()[0...2] == ["  line 1", "> line 2", "  line 3"])
        plain.server(Self.page(version: 2, line: 1))
        #expect(plain.model.screen()[0] == "line 1", "no mark, no gutter")
    }

    @Test func anOpenRoomScrollsOnItsOwnAndPBringsEveryoneToYourLine() {
        var h = Self.harness(open: true, name: "ann")
        h.type("6j")
        #expect(h.sent() == [])
        #expect(!h.model.statusText().contains("room at line"), "nobody has focused the room")
        h.type("p")
        #expect(h.sent() == ["LINE 7 IF 0"])
        #expect(h.model.message == "bringing everyone to line 7")
        h.server("OK page=1 pages=6 version=1 line=7 mark=-")
        h.type("p")
        #expect(h.model.message == "the room is at your line (7) already")
        h.server(Self.page(version: 2, line: 20, by: "cid"))
        #expect(h.model.screen()[0] == "line 20", "someone's LINE moves an open room's readers too")
        h.type("L")
        #expect(h.model.message == "an open room: scrolling is each reader's own; p brings everyone to your line")
    }

    @Test func followOnlyNeverMovesTheRoom() {
        var options = PagerOptions(size: TerminalSize(columns: 40, rows: 11), followOnly: true)
        options.token = "t"
        var h = Harness(options)
        h.event(.connected)
        h.server(hello(page: 1, version: 0, control: false, name: "zed"))
        h.server("OK AUTH control=yes")
        h.answerTextsWith(Self.lines)
        _ = h.sent()
        h.type("5j")
        h.type("x")
        h.type("p")
        #expect(h.sent() == [])
        #expect(h.model.message == "follower only (--follow): this pager never moves the room")
    }

    @Test func aReconnectFollowsALineThatMovedMeanwhileElseKeepsYourPlace() {
        var h = Self.harness()
        h.server(Self.page(version: 1, line: 12))
        h.type("3j")
        h.event(.disconnected(reason: "the server closed the connection"))
        h.event(.connected)
        h.server(hello(page: 1, version: 1, control: false, name: "bob").replacingFocus(line: 12))
        #expect(h.model.screen()[0] == "line 15", "the room did not move: your place")
        h.event(.disconnected(reason: "the server closed the connection"))
        h.event(.connected)
        h.server(hello(page: 1, version: 2, control: false, name: "bob").replacingFocus(line: 30))
        #expect(h.model.screen()[0] == "line 30", "the room moved: follow it")
    }
}

@Suite struct LineNumberTests {
    @Test func theFilesOwnLinesAndTheRoomsLineSaidAsOne() {
        var options = PagerOptions(size: TerminalSize(columns: 40, rows: 6), colors: .none)
        options.lineNumbers = true
        var h = Harness(options)
        h.event(.connected)
        h.server(hello(page: 2, version: 0, control: false, name: "bob"))
        h.server(["OK TEXT page=2 pages=6 doc=d1 bytes=99 lines=40 truncated=no firstline=41"]
                 + (1...40).map { "p2 line \($0)" } + ["."])
        #expect(h.model.screen()[0] == "  41 p2 line 1")
        #expect(h.model.screen()[4] == "  45 p2 line 5")
        h.server(FocusModelTests.page(2, version: 1, line: 3))
        h.type("5j")
        #expect(h.model.statusText().contains("room at line 43"), "the room's line 3 is file line 43")
        h.type("-")
        h.type("N")
        #expect(h.model.screen()[0] == "p2 line 8")
        h.type("-")
        h.type("x")
        #expect(h.model.message == "-x: not an option (-N: line numbers)")
    }

    @Test func gutters() {
        #expect(LineNumbers.gutter(41, width: 5) == "  41 ")
        #expect(LineNumbers.gutter(nil, width: 5) == "     ")
        #expect(LineNumbers.width(lastLine: 123_456) == 7)
        #expect(LineNumbers.width(lastLine: 9) == 5)
    }
}

@Suite struct FocusPartsTests {
    @Test func requestsOneInFlightNewestWins() {
        let room = RoomView(name: "r", page: 1, pageCount: 3, version: 4, by: nil, doc: "d", wraps: false, control: true)
        var r = FocusRequests()
        r.want(line: 3)
        #expect(r.next(room: room) == .line(3, ifVersion: 4))
        r.want(line: 5)
        r.want(line: 9)
        #expect(r.next(room: room) == nil)
        r.answered(errorCode: nil, samePage: true)
        #expect(r.next(room: room) == .line(9, ifVersion: 4))
        r.answered(errorCode: 409, samePage: true)
        #expect(r.line == nil, "a refusal is not asked again")
        r.want(line: 9)
        r.want(mark: LineRange(first: 2, last: 4))
        #expect(r.next(room: room) == .mark(LineRange(first: 2, last: 4), ifVersion: 4), "the mark first")
        r.answered(errorCode: 409, samePage: false)
        #expect(r.line == nil && r.mark == nil, "another page: nothing waits")
        r.want(line: 1)
        #expect(r.next(room: room) == nil, "the room is there already")
        r.want(mark: nil)
        #expect(r.next(room: room) == nil)
        r.answered(errorCode: 416, samePage: true)
        #expect(r.inFlight == nil)
    }

    @Test func sourceLinesOfPlainAndMarkdownPages() {
        #expect(SourceLines.plain.shown(1) == 0 && SourceLines.plain.source(ofShown: 9) == 10)
        #expect(SourceLines.window(firstLine: 100).source(ofShown: 0) == 101)
        let md = "# Title\n\nA paragraph\nover two lines.\n\n```swift\nlet a = 1\nlet b = 2\n```\n\n- one\n- two\n"
        let page = MarkdownRenderer.renderPage(markdown: md, colors: .none)
        let map = SourceLines.markdown(page.blocks, shownCount: page.lines.count)
        // Rendered: the title, its rule, blank, the paragraph (one line), blank, two code lines, blank, two items.
        let title = map.shown(1)
        #expect(page.lines[title].contains("Title"))
        #expect(page.lines[map.shown(3)].hasPrefix("A paragraph"))
        #expect(map.shown(4) == map.shown(3), "a paragraph's lines are one line to the room")
        #expect(page.lines[map.shown(7)].contains("let a = 1"))
        #expect(page.lines[map.shown(8)].contains("let b = 2"), "code lines one for one")
        #expect(map.source(ofShown: map.shown(8)) == 8)
        #expect(map.source(ofShown: map.shown(3)) == 3)
        #expect(page.lines[map.shown(12)].contains("one"), "a list is one block: its first line")
        let marked = map.shown(LineRange(first: 3, last: 4)!)
        #expect(marked.lowerBound == map.shown(3) && page.lines[marked.upperBound].contains("over two lines"))
    }

    @Test func statusLineSaysWhereTheRoomIs() {
        var line = StatusLine(room: "talk", page: 2, pageCount: 9, mode: .following, roomPage: 2, connection: .connected,
                              by: nil, message: nil)
        line.roomLine = 212
        #expect(line.render(width: 80) == "talk · page 2/9 ○ ● ○ ○ ○ … ○ · room at line 212 · F to follow")
        #expect(line.render(width: 30) == "talk · page 2/9 · line 212")
        line.roomLine = nil
        line.leading = true
        #expect(line.render(width: 80).contains(" · leading"))
    }
}

extension Harness {
    /// Answers every TEXT request at the front of the queue with `lines`.
    mutating func answerTextsWith(_ lines: [String]) { answerTexts(with: lines) }
}

extension String {
    /// A greeting with the room's line (and no mark) added.
    func replacingFocus(line: Int) -> String { self + " epoch=e line=\(line) mark=-" }
}
