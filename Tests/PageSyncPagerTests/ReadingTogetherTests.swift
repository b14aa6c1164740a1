import PageSyncCore
import Testing
import PageSyncPager

@Suite struct EdgeGuardTests {
    let page3 = PageKey(doc: "d", page: 3)
    let page4 = PageKey(doc: "d", page: 4)

    @Test func unguardedTurnsAtOnce() {
        var g = EdgeGuard()
        #expect(g.press(.forward, at: page3, guarded: false) == .turn(.forward))
        #expect(g.state == .idle)
    }

    @Test func asksThenWarnsThenTurnsOnTheSecondPress() {
        var g = EdgeGuard()
        #expect(g.press(.forward, at: page3, guarded: true) == .ask)
        #expect(g.press(.forward, at: page3, guarded: true) == .wait, "a press while the answer is on its way does nothing")
        #expect(g.answered(readers: 5, showing: page3) == .warn(.forward, readers: 5))
        #expect(g.state == .armed(.forward, page3, readers: 5))
        #expect(g.press(.forward, at: page3, guarded: true) == .turn(.forward))
        #expect(g.state == .idle)
    }

    @Test func aRoomOfOneTurnsOnTheAnswer() {
        var g = EdgeGuard()
        #expect(g.press(.backward, at: page3, guarded: true) == .ask)
        #expect(g.answered(readers: 1, showing: page3) == .turn(.backward))
        #expect(g.answered(readers: 1, showing: page3) == nil, "one answer, one turn")
    }

    @Test func anotherEdgeOrPageAsksAgain() {
        var g = EdgeGuard()
        _ = g.press(.forward, at: page3, guarded: true)
        _ = g.answered(readers: 2, showing: page3)
        #expect(g.press(.backward, at: page3, guarded: true) == .ask, "the other edge is another question")
        _ = g.answered(readers: 2, showing: page3)
        #expect(g.press(.forward, at: page4, guarded: true) == .ask, "another page too")
        #expect(g.answered(readers: 2, showing: page3) == nil, "the page changed under the question: let go")
        #expect(g.state == .idle)
        _ = g.press(.forward, at: page4, guarded: true)
        _ = g.answered(readers: 2, showing: page4)
        g.reset()
        #expect(g.press(.forward, at: page4, guarded: true) == .ask)
    }
}

@Suite struct ReadingTogetherTests {
    let small = PagerOptions(size: TerminalSize(columns: 100, rows: 10))
    func long(_ n: Int) -> [String] { (1...n).map { "row \($0)" } }

    @Test("two readers: Space at the end warns, a second Space turns; anything between starts over")
    func secondSpaceTurnsForEveryone() {
        var h = Harness(hello: hello(page: 3, version: 7), text: long(20), options: small)
        h.type("G")
        h.type(" ")
        #expect(h.sent() == ["STATUS"])
        #expect(h.model.message == "end of page 3")
        h.type(" ")  // the answer is not in yet: nothing more
        #expect(h.sent() == [])
        h.server(statusReply(page: 3, version: 7, clients: 2))
        #expect(h.sent() == [])
        #expect(h.model.message == "Space again turns the page for everyone (2 readers)")
        #expect(h.model.messageIsNotice)
        #expect(h.model.statusText().hasSuffix("Space again turns the page for everyone (2 readers)"))
        #expect(h.model.room?.page == 3)
        h.type("k")  // something else: the next Space asks again
        h.type("j")
        h.type(" ")
        #expect(h.sent() == ["STATUS"])
        h.server(statusReply(page: 3, version: 7, clients: 5))
        #expect(h.model.message?.hasSuffix("(5 readers)") == true)
        h.type(" ")
        #expect(h.sent() == ["NEXT IF 7"])
        h.reply("OK page=4 pages=6 version=8")
        #expect(h.model.room?.page == 4)
        #expect(h.model.message == nil)
    }

    @Test("b at the top in a room of two: warns, then turns back and shows the previous page's end")
    func secondBTurnsBack() {
        var h = Harness(hello: hello(page: 3, version: 7), text: long(20), options: small)
        h.type("b")
        h.server(statusReply(page: 3, version: 7, clients: 2))
        #expect(h.model.message == "b again turns back to page 2 for everyone (2 readers)")
        h.type("b")
        #expect(h.sent() == ["STATUS", "PREV IF 7"])
        h.server("OK page=2 pages=6 version=8")
        h.server(textReply(page: 2, long(25)))
        #expect(h.model.screen()[8] == "row 25")
    }

    @Test("the room moving meanwhile lets the guard go: the next Space asks about the new page")
    func theRoomMovingResets() {
        var h = Harness(hello: hello(page: 3, version: 7), text: ["short"], options: small)
        h.type(" ")
        h.server(pageEvent(page: 5, version: 8, by: "bob"))
        h.server(statusReply(page: 5, version: 8, clients: 2))
        #expect(h.model.message?.contains("for everyone") != true)
        _ = h.sent()
        h.answerTexts()
        h.type(" ")
        #expect(h.sent() == ["STATUS"])
    }

    @Test("a presenter with control drives: one Space turns; an audience member browses on their own")
    func presenterTurnsAtOnce() {
        var h = Harness(PagerOptions(token: "s3cret", size: TerminalSize(columns: 100, rows: 10)))
        h.event(.connected)
        h.server(hello(page: 2, version: 4, control: false))
        #expect(h.sent() == ["AUTH s3cret", "TEXT 2"])
        h.server("OK AUTH control=yes")
        h.server(textReply(page: 2, ["short"]))
        h.type(" ")
        #expect(h.sent() == ["NEXT IF 4"])
        // Without a token in the same room: no control, browsing on your own, no question either.
        var a = Harness(hello: hello(page: 2, version: 4, control: false), text: ["short"], options: small)
        a.type(" ")
        #expect(a.sent() == ["TEXT 3"])
        #expect(a.model.mode == .detached(viewPage: 3))
    }

    @Test("a STATUS refused lets the guard go and says why")
    func statusRefused() {
        var h = Harness(hello: hello(page: 3, version: 7), text: ["short"], options: small)
        h.type(" ")
        h.server("ERR 503 state engine unavailable")
        #expect(h.model.message == "state engine unavailable")
        h.type(" ")
        #expect(h.sent() == ["STATUS", "STATUS"])
    }

    @Test("<n>g and <n>G go to line n, <n>% to n percent, <n>Enter n lines down: the screen only")
    func linesAsInLess() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(100), options: small)  // 9 content rows
        h.type("20g")
        #expect(h.model.screen()[0] == "row 20")
        h.type("5G")
        #expect(h.model.screen()[0] == "row 5")
        h.type("500g")
        #expect(h.model.screen()[8] == "row 100", "past the end: the last screen")
        h.type("50%")
        #expect(h.model.screen()[0] == "row 51")
        h.type("50p")
        #expect(h.model.screen()[0] == "row 51")
        h.type("0%")
        #expect(h.model.screen()[0] == "row 1")
        h.type("5")
        h.keys(.enter)
        #expect(h.model.screen()[0] == "row 6")
        #expect(h.sent() == [])
        #expect(h.model.room?.page == 2)
    }

    @Test("a key pagesync does not use says so; = says where you are")
    func unknownKeysAndInfo() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(100), options: small)
        h.type("m")
        #expect(h.model.message == "m: not a pagesync key (h lists them)")
        #expect(h.model.statusText() == "guide · page 2/6 · following · lines 1-9/100 9% more↓ · m: not a pagesync key (h lists them)")
        h.keys(.ctrl("x"))
        #expect(h.model.message == "Ctrl-X: not a pagesync key (h lists them)")
        h.keys(.escape)
        #expect(h.model.message == nil)
        h.type("=")
        #expect(h.model.message == "guide · page 2 of 6 · lines 1-9/100 9% · an open room")
        #expect(h.model.messageIsNotice, "asked for: shown in full")
    }

    @Test("the document's title names the room on the status line and in =")
    func title() {
        let greeting = hello(page: 1, pages: 3) + " file=talk.md title=My%20talk"
        var h = Harness(hello: greeting, text: ["# Hi"], options: small)
        #expect(h.model.room?.title == "My talk")
        #expect(h.model.statusText().hasPrefix("My talk · page 1/3"))
        h.type("=")
        #expect(h.model.message?.hasPrefix("guide “My talk” · page 1 of 3") == true)
        #expect(h.model.message?.contains("file talk.md") == true)
    }

    @Test("under & the position says how many lines match, of how many")
    func filterCounts() {
        var lines = long(40)
        for i in stride(from: 0, to: 40, by: 3) { lines[i] = "hit \(i)" }
        var h = Harness(hello: hello(page: 2, version: 3), text: lines, options: small)
        h.type("&hit")
        h.keys(.enter)
        #expect(h.model.statusText().contains("14/40 match more↓ · &hit: only matching lines show"), "\(h.model.statusText())")
        h.type("j")
        #expect(h.model.statusText().contains("· following · 14 of 40 lines match more↓"), "\(h.model.statusText())")
    }

    @Test("an edited page shorter than your line shows its last screen")
    func editClampsToTheEnd() {
        var h = Harness(hello: hello(page: 2), text: long(30), options: small)
        h.type("20g")
        h.server(pageEvent(page: 2, version: 1, doc: "d2"))
        h.server(textReply(page: 2, doc: "d2", long(12)))
        #expect(h.model.screen()[8] == "row 12")
        #expect(h.model.scrollOffset == 3)
    }
}

@Suite struct WideTableTests {
    static let page = """
        Some prose that is long enough to wrap at thirty columns of width.

        | name | what it does | default value |
        |------|--------------|---------------|
        | split | how pages are cut from the document | markdown |

        > | a | b |
        > |---|---|
        > | 1 | 2 |
        """

    @Test("a table's lines are marked, also in a quote")
    func tableLinesAreMarked() {
        let rendered = MarkdownRenderer.renderPage(markdown: Self.page, colors: .none)
        let marked = rendered.tableLines.sorted().map { rendered.lines[$0] }
        #expect(marked.count == 6, "\(rendered.lines)")
        #expect(marked.allSatisfy { $0.contains("│") || $0.contains("─") })
        #expect(!rendered.tableLines.contains(0))
    }

    @Test("at 30 columns prose wraps, a table is chopped with > and scrolls sideways with → ←")
    func wideTablesAreChopped() {
        var options = PagerOptions(size: TerminalSize(columns: 30, rows: 20))
        options.markdown = .always
        options.colors = .none
        var h = Harness(hello: hello(page: 1, pages: 1), text: Self.page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                        options: options)
        let screen = h.model.screen()
        #expect(screen[0] == "Some prose that is long enough")
        #expect(screen[1] == " to wrap at thirty columns of ")
        let table = screen.filter { $0.contains("│") || $0.hasPrefix("─") }
        #expect(table.count >= 3, "\(screen)")
        #expect(table.allSatisfy { DisplayWidth.of($0) == 30 || !$0.hasSuffix(">") }, "\(screen)")
        #expect(screen.contains("name  │ what it does         >"), "one row per table line: \(screen)")
        #expect(screen.contains("──────┼──────────────────────>"), "the header rule on one row: \(screen)")
        #expect(!screen.contains { $0.hasPrefix("value") || $0.hasPrefix("default") }, "nothing of the table wraps: \(screen)")
        h.keys(.right)
        #expect(h.model.sidewaysShift == 8)
        #expect(h.model.screen()[0] == "Some prose that is long enough", "prose stays put")
        #expect(h.model.screen().contains { $0.hasPrefix("<") }, "\(h.model.screen())")
        h.keys(.left)
        #expect(h.model.sidewaysShift == 0)
        // A page without a wide table: → says lines wrap here.
        var plain = Harness(hello: hello(page: 1, pages: 1), text: ["short"], options: options)
        plain.keys(.right)
        #expect(plain.model.message == "long lines wrap here: w chops them")
    }
}
