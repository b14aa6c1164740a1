import PageSyncCore
import Testing
import PageSyncPager

@Suite struct ScreenAndKeysTests {
    func long(_ n: Int) -> [String] { (1...n).map { "row \($0)" } }

    @Test func scrollingWithinAPage() {
        var h = Harness(hello: hello(), text: long(50), options: PagerOptions(size: TerminalSize(columns: 40, rows: 11)))
        #expect(h.model.screen()[0] == "row 1")
        h.type("jj")
        #expect(h.model.scrollOffset == 2)
        h.keys(.down, .enter)
        #expect(h.model.scrollOffset == 4)
        h.type("k")
        h.keys(.up)
        #expect(h.model.scrollOffset == 2)
        h.type("d")
        #expect(h.model.scrollOffset == 7)
        h.type("u")
        #expect(h.model.scrollOffset == 2)
        h.type(String(repeating: "d", count: 20))
        #expect(h.model.scrollOffset == 40)  // 50 rows, 10 visible
        #expect(h.model.screen()[9] == "row 50")
        h.type(String(repeating: "u", count: 20))
        #expect(h.model.scrollOffset == 0)
        #expect(h.sent() == [])
    }

    @Test func pageChangeScrollsToTop() {
        var h = Harness(hello: hello(), text: long(50), options: PagerOptions(size: TerminalSize(columns: 40, rows: 11)))
        h.type("ddd")
        h.server(pageEvent(page: 2, version: 1))
        #expect(h.model.scrollOffset == 0)
    }

    @Test func anEditOnDiskKeepsYourLineOnThePage() {
        // The presenter fixes a typo: the daemon re-indexes and sends the same page with a new doc=.
        // Every reader stays at the line they were reading (as less's reload does), clamped to the new text.
        var h = Harness(hello: hello(page: 2), text: long(30), options: PagerOptions(size: TerminalSize(columns: 40, rows: 11)))
        h.keys(.char("1"), .char("2"), .char("j"))
        #expect(h.model.screen()[0] == "row 13")
        h.server(pageEvent(page: 2, version: 1, doc: "d2"))
        #expect(h.sent() == ["TEXT 2"])
        var edited = long(30)
        edited[3] = "row 4, fixed"
        h.server(textReply(page: 2, doc: "d2", edited))
        #expect(h.model.scrollOffset == 12)
        #expect(h.model.screen()[0] == "row 13")
        // Shorter now: as far down as the new text goes.
        h.server(pageEvent(page: 2, version: 2, doc: "d3"))
        h.server(textReply(page: 2, doc: "d3", long(15)))
        #expect(h.model.scrollOffset == 5)
        // Scrolling meanwhile is the reader's own choice: it wins.
        h.server(pageEvent(page: 2, version: 3, doc: "d4"))
        h.type("g")
        h.server(textReply(page: 2, doc: "d4", long(15)))
        #expect(h.model.scrollOffset == 0)
        // A page turn still starts at the top.
        h.type("G")
        h.server(pageEvent(page: 3, version: 4, doc: "d5"))
        h.server(textReply(page: 3, doc: "d5", long(30)))
        #expect(h.model.scrollOffset == 0)
    }

    @Test("a reconnect through the server's first room and a JOIN back keeps your line and columns")
    func aReconnectThroughAnotherRoomKeepsYourPlace() {
        var h = Harness(hello: hello(page: 2), text: long(30).map { $0 + String(repeating: ".", count: 60) },
                        options: PagerOptions(room: "guide", size: TerminalSize(columns: 40, rows: 11)))
        h.keys(.char("9"), .char("j"), .char("w"), .right, .right)
        let offset = h.model.scrollOffset
        #expect(offset == 4)  // 9 wrapped rows down: line 5 at the top, kept when w chops
        #expect(h.model.sidewaysShift == 16)
        // Reconnected into the server's first room (another document), then JOINed back.
        h.event(.disconnected(reason: "gone"))
        h.event(.connected)
        h.server(hello(room: "other", page: 2, doc: "o1"))
        #expect(h.model.scrollOffset == 0, "the other room's page starts at its top")
        #expect(h.sent().contains("JOIN guide"))
        h.server("OK JOIN room=guide page=2 pages=6 version=0 by=- doc=d1 epoch= wrap=no control=yes")
        h.answerTexts()
        #expect(h.model.room?.name == "guide")
        #expect(h.model.scrollOffset == offset)
        #expect(h.model.sidewaysShift == 16)
        #expect(h.model.screen()[0].hasPrefix("<"))
        // A greeting on another page of the room starts at its top.
        h.event(.disconnected(reason: "gone again"))
        h.event(.connected)
        h.server(hello(room: "guide", page: 3, version: 1))
        h.answerTexts()
        #expect(h.model.scrollOffset == 0)
        #expect(h.model.sidewaysShift == 0)
    }

    @Test func aLongPromptShowsItsEndWithinTheWidthEvenInWideCharacters() {
        // A prompt wider than the screen shows its end, as less does; measured in columns, so
        // a CJK pattern never writes past the last column (the terminal would scroll the frame).
        var h = Harness(hello: hello(pages: 1), text: ["x"], options: PagerOptions(size: TerminalSize(columns: 8, rows: 5)))
        h.type("/漢字漢字漢字")
        #expect(DisplayWidth.of(h.model.statusText()) <= 8)
        #expect(h.model.statusText().hasSuffix("漢字"))
        h.keys(.escape)
        h.type("&abcdefghij")
        #expect(h.model.statusText() == "defghij")  // the last column stays free, as before
        h.keys(.escape)
        h.type("/ab漢")
        #expect(h.model.statusText() == "/ab漢")  // fits: shown whole
        h.keys(.escape)
        for width in 1...6 {
            var narrow = Harness(hello: hello(pages: 1), text: ["x"], options: PagerOptions(size: TerminalSize(columns: width, rows: 5)))
            narrow.type("?字字字字")
            #expect(DisplayWidth.of(narrow.model.statusText()) <= width, "at \(width) columns: \(narrow.model.statusText())")
        }
    }

    @Test func searchForwardBackwardAndRepeat() {
        var lines = long(40)
        lines[4] = "an Apple here"
        lines[19] = "apple again"
        lines[29] = "APPLE third"
        var h = Harness(hello: hello(pages: 1), text: lines, options: PagerOptions(size: TerminalSize(columns: 40, rows: 11)))
        h.type("/apple")
        #expect(h.model.statusText() == "/apple")
        h.keys(.enter)
        #expect(h.model.scrollOffset == 4)
        h.type("n")
        #expect(h.model.scrollOffset == 19)
        h.type("n")
        #expect(h.model.scrollOffset == 29)  // clamped max is 30, line 30 is row 29
        h.type("n")
        #expect(h.model.message == "pattern not found: apple")  // one page: nowhere to go on to
        h.type("N")
        #expect(h.model.scrollOffset == 19)
        h.type("?Apple")
        h.keys(.enter)
        #expect(h.model.scrollOffset == 4)  // case-sensitive: only "an Apple here"
        h.type("/zzz")
        h.keys(.backspace, .backspace, .backspace, .backspace)
        #expect(h.model.statusText() != "/")
        h.type("/nothing")
        h.keys(.escape)
        #expect(h.model.scrollOffset == 4)
        #expect(h.sent() == [])
    }

    @Test func repeatWithoutSearch() {
        var h = Harness(hello: hello())
        h.type("n")
        #expect(h.model.message == "no previous search")
    }

    @Test func wrapToggle() {
        let text = [String(repeating: "x", count: 30), "short"]
        var h = Harness(hello: hello(), text: text, options: PagerOptions(size: TerminalSize(columns: 10, rows: 6)))
        #expect(Array(h.model.screen().prefix(4)) == ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx", "short"])
        h.type("w")
        #expect(!h.model.lineWrap)
        #expect(Array(h.model.screen().prefix(3)) == ["xxxxxxxxx>", "short", "~"])  // > marks the cut
    }

    @Test func screenFitsAndDocumentCannotDriveTheTerminal() {
        let evil = ["\u{1B}[2J\u{1B}[Hgotcha\u{1B}]0;title\u{07}", "中文中文中文中文", "\u{1B}[31mred\u{1B}[0m"]
        var h = Harness(hello: hello(), text: evil, options: PagerOptions(size: TerminalSize(columns: 7, rows: 8)))
        let screen = h.model.screen()
        #expect(screen.count == 8)
        #expect(screen[0] == "gotcha")
        #expect(screen[1] == "中文中")
        #expect(screen[4] == "\u{1B}[31mred\u{1B}[0m\u{1B}[0m")
        for row in screen { #expect(DisplayWidth.of(Sanitizer.plainText(row)) <= 7) }
        let frame = h.model.frame()
        #expect(frame.hasPrefix("\u{1B}[H"))
        #expect(!frame.contains("\u{1B}]"))
        #expect(!frame.contains("\u{1B}[2J"))
    }

    @Test func resizeReflowsAndClears() {
        var h = Harness(hello: hello(), text: [String(repeating: "y", count: 20)])
        let fx = h.event(.resized(TerminalSize(columns: 5, rows: 10)))
        #expect(fx == [.clearAndRepaint])
        #expect(Array(h.model.screen().prefix(5)) == ["yyyyy", "yyyyy", "yyyyy", "yyyyy", "~"])
        #expect(h.model.screen().count == 10)
    }

    @Test func quitSuspendRedraw() {
        var h = Harness(hello: hello())
        #expect(h.keys(.ctrl("l")) == [.clearAndRepaint])
        #expect(h.keys(.ctrl("z")) == [.suspend])
        #expect(h.event(.resumed) == [.clearAndRepaint])
        #expect(h.keys(.ctrl("c")) == [.quit(status: 0, message: nil)])
        #expect(h.keys(.char("q")) == [.quit(status: 0, message: nil)])
        h.type("/ab")
        #expect(h.keys(.ctrl("c")) == [.quit(status: 0, message: nil)])
    }

    @Test func helpScreen() {
        var h = Harness(hello: hello())
        h.type("h")
        #expect(h.model.showingHelp)
        #expect(h.model.screen()[0] == PagerModel.helpLines[0])
        #expect(h.model.statusText() == "help · q to close")
        #expect(h.keys(.char("q")) == [.repaint])  // closes help, does not quit
        #expect(!h.model.showingHelp)
        #expect(h.model.screen()[0] == "line one")
        #expect(h.sent() == [])
    }

    @Test func helpKeysMoveAtOnceAfterAResize() {
        // Scrolled to the end of the help on a small terminal, then the terminal grows: the first
        // k must move the help up a row (it took dozens of presses to get back from the old offset).
        var h = Harness(hello: hello(), options: PagerOptions(size: TerminalSize(columns: 40, rows: 10)))
        h.type("h")
        h.type(String(repeating: "j", count: 100))
        h.event(.resized(TerminalSize(columns: 80, rows: 24)))
        let bottom = h.model.screen()
        #expect(bottom[22] == PagerModel.helpLines.last)  // the end of the help on the last row
        h.type("k")
        let up = h.model.screen()
        #expect(up[0] != bottom[0] && up[1] == bottom[0], "k did not move the help: \(up[0])")
    }

    @Test func theHelpScreenNeverMovesThePageUnderIt() {
        // Reading line 51 of 100, open the help; a resize, the room's news and the page's text
        // arriving meanwhile must leave the page where it was (they clamped it to the help's rows).
        let lines = (1...100).map { "row \($0)" }
        var h = Harness(hello: hello(), text: lines, options: PagerOptions(size: TerminalSize(columns: 80, rows: 24)))
        h.keys(.char("5"), .char("0"), .char("j"))
        #expect(h.model.screen()[0] == "row 51")
        h.type("h")
        h.event(.resized(TerminalSize(columns: 100, rows: 30)))
        h.server(pageEvent(page: 1, version: 1))  // the same page, a newer version
        h.type("q")
        #expect(h.model.screen()[0] == "row 51")
        // The document changed on disk while the help was up: the line is kept as well.
        h.type("h")
        h.server(pageEvent(page: 1, version: 2, doc: "d2"))
        h.server(textReply(page: 1, doc: "d2", lines))
        h.type("q")
        #expect(h.model.screen()[0] == "row 51")
    }

    @Test func connectingScreen() {
        var m = PagerModel(options: PagerOptions(server: "example:7777"))
        let screen = m.screen()
        #expect(screen[0] == "connecting to example:7777…")
        #expect(screen.last == "connecting…")
        #expect(m.handle(.key(.char(" "))) == [.repaint])
        #expect(m.message == "not connected yet")
    }

    @Test func truncatedPageIsMarked() {
        var h = Harness()
        h.event(.connected)
        h.server(hello())
        h.server("OK TEXT page=1 pages=6 doc=d1 bytes=9999999 lines=1 truncated=yes", "start", ".")
        #expect(h.sent() == ["TEXT 1", "TEXT 1 FROM 0"])  // too long to send at once: read in pieces
        h.server("ERR 400 unknown command \"text 1 from 0\"")  // a server that cannot send pieces
        #expect(h.model.screen()[0].hasPrefix("[page 1 could not be loaded: unknown command"))
        #expect(h.model.message?.hasPrefix("page 1 could not be read in pieces") == true)
    }

    @Test func textErrorIsShownNotRetriedForever() {
        var h = Harness()
        h.event(.connected)
        h.server(hello(page: 2))
        #expect(h.sent() == ["TEXT 2"])
        h.server("ERR 404 no page 2: this document has 1 pages")
        #expect(h.model.screen()[0].hasPrefix("[page 2 could not be loaded"))
        h.type("j")
        #expect(h.sent() == [])
    }
}
