import Testing
import PageSyncPager
import PageSyncCore

@Suite struct ReaderKeysTests {
    @Test func screenKeysAsInLess() {
        for k in [Key.char(" "), .char("f"), .pageDown] { #expect(ReaderKeys.action(for: k, count: nil) == .forward(lines: nil)) }
        for k in [Key.char("b"), .pageUp] { #expect(ReaderKeys.action(for: k, count: nil) == .backward(lines: nil)) }
        for k in [Key.char("j"), .down, .enter] { #expect(ReaderKeys.action(for: k, count: nil) == .lineDown(1)) }
        for k in [Key.char("k"), .up] { #expect(ReaderKeys.action(for: k, count: nil) == .lineUp(1)) }
        for k in [Key.char("g"), .char("<"), .home] { #expect(ReaderKeys.action(for: k, count: nil) == .top) }
        for k in [Key.char("G"), .char(">"), .end] { #expect(ReaderKeys.action(for: k, count: nil) == .bottom) }
        #expect(ReaderKeys.action(for: .char("d"), count: nil) == .halfDown(lines: nil))
        #expect(ReaderKeys.action(for: .char("u"), count: nil) == .halfUp(lines: nil))
        for k in [Key.char("="), .ctrl("g")] { #expect(ReaderKeys.action(for: k, count: nil) == .info) }
    }

    @Test func roomKeys() {
        #expect(ReaderKeys.action(for: .char("]"), count: nil) == .nextPage(1))
        #expect(ReaderKeys.action(for: .char("["), count: nil) == .previousPage(1))
        #expect(ReaderKeys.action(for: .char("{"), count: nil) == .firstPage)
        #expect(ReaderKeys.action(for: .char("}"), count: nil) == .lastPage)
        #expect(ReaderKeys.action(for: .char(":"), count: nil) == .startPageCommand)
        #expect(ReaderKeys.action(for: .char("p"), count: nil) == .pull)
    }

    @Test("a count goes to the key as in less: lines for g G Enter, percent for % and p, pages for ] [")
    func countsGoToTheKey() {
        #expect(ReaderKeys.action(for: .char(" "), count: 5) == .forward(lines: 5))
        #expect(ReaderKeys.action(for: .char("b"), count: 5) == .backward(lines: 5))
        #expect(ReaderKeys.action(for: .char("j"), count: 7) == .lineDown(7))
        #expect(ReaderKeys.action(for: .char("k"), count: 7) == .lineUp(7))
        #expect(ReaderKeys.action(for: .enter, count: 5) == .lineDown(5))
        for k in [Key.char("g"), .char("G"), .char("<"), .char(">"), .home, .end] {
            #expect(ReaderKeys.action(for: k, count: 20) == .gotoLine(20))
        }
        #expect(ReaderKeys.action(for: .char("%"), count: 50) == .percent(50))
        #expect(ReaderKeys.action(for: .char("p"), count: 50) == .percent(50), "50p is less's 50%, never a pull")
        #expect(ReaderKeys.action(for: .char("]"), count: 3) == .nextPage(3))
        #expect(ReaderKeys.action(for: .char("["), count: 3) == .previousPage(3))
        #expect(ReaderKeys.action(for: .char("z"), count: 3) == .unknown(.char("z")))
    }

    @Test("keys pagesync has no use for are named; Esc is silent")
    func unknownKeys() {
        for k in [Key.char("m"), .char("'"), .char("v"), .char("!"), .tab, .ctrl("x"), .backspace] {
            #expect(ReaderKeys.action(for: k, count: nil) == .unknown(k))
        }
        #expect(ReaderKeys.action(for: .escape, count: nil) == ReaderAction.none)
        #expect(ReaderKeys.name(of: .ctrl("x")) == "Ctrl-X")
        #expect(ReaderKeys.name(of: .char("m")) == "m")
        #expect(ReaderKeys.name(of: .tab) == "Tab")
    }
}

@Suite struct ViewportTests {
    @Test func clampsToTheLastScreen() {
        var v = Viewport()
        v.scroll(by: 100, rowCount: 41, height: 9)
        #expect(v.offset == 32)
        #expect(v.atBottom(rowCount: 41, height: 9))
        v.scroll(by: -5, rowCount: 41, height: 9)
        #expect(v.offset == 27)
        #expect(!v.atBottom(rowCount: 41, height: 9))
        v.scroll(by: -100, rowCount: 41, height: 9)
        #expect(v.atTop)
        v.set(3, rowCount: 5, height: 9)  // fits: never scrolls
        #expect(v.offset == 0)
        #expect(v.atBottom(rowCount: 5, height: 9))
    }

    @Test func positionSaysLinesPercentAndMoreBelow() {
        let rows = Layout.rows(lines: (1...41).map { "l\($0)" }, width: 10, wrap: true)
        let top = PagePosition.of(rows, offset: 0, height: 9)
        #expect(top == PagePosition(firstLine: 1, lastLine: 9, lineCount: 41, moreBelow: true))
        #expect(top?.text == "lines 1-9/41 21%")
        let end = PagePosition.of(rows, offset: 32, height: 9)
        #expect(end == PagePosition(firstLine: 33, lastLine: 41, lineCount: 41, moreBelow: false))
        #expect(end?.percent == 100)
        #expect(PagePosition.of([], offset: 0, height: 9) == nil)
    }
}

@Suite struct PageTextCacheTests {
    @Test func evictsOldestButNeverTheShownPage() {
        var c = PageTextCache()
        let shown = PageKey(doc: "d", page: 1)
        c.markRequested(shown)
        #expect(!c.needs(shown))
        for p in 1...(PageTextCache.limit + 3) { c.store(["\(p)"], for: PageKey(doc: "d", page: p), keep: shown) }
        #expect(c[shown] == ["1"])
        #expect(c[PageKey(doc: "d", page: 2)] == nil)
        #expect(c.needs(PageKey(doc: "d", page: 2)))
        #expect(c[PageKey(doc: "d", page: PageTextCache.limit + 3)] == ["\(PageTextCache.limit + 3)"])
        c.markRequested(PageKey(doc: "d", page: 99))
        c.forgetRequests()
        #expect(c.needs(PageKey(doc: "d", page: 99)))
    }
}

@Suite struct NavigationRequestsTests {
    let room = RoomView(name: "r", page: 3, pageCount: 6, version: 9, by: nil, doc: "d", wraps: false, control: true)

    @Test func combineAndResolve() {
        let two = NavigationRequests.combine(NavigationIntent(base: .current, offset: 1), NavigationIntent(base: .current, offset: 1))
        #expect(two == NavigationIntent(base: .current, offset: 2))
        #expect(NavigationRequests.resolve(two, current: 3, room: room) == 5)
        #expect(NavigationRequests.command(for: two, target: 5, version: 9) == .navigate(.goto(PageNumber(5)!), ifVersion: 9))
        #expect(NavigationRequests.command(for: NavigationIntent(base: .current, offset: 1), target: 4, version: 9) == .navigate(.next, ifVersion: 9))
        let absolute = NavigationRequests.combine(two, NavigationIntent(base: .first, offset: 0))
        #expect(absolute == NavigationIntent(base: .first, offset: 0))
        #expect(NavigationRequests.resolve(NavigationIntent(base: .current, offset: 9), current: 6, room: room) == nil)
        #expect(NavigationRequests.edgeMessage(NavigationIntent(base: .current, offset: 1), current: 6, room: room)
                == "already on the last page")
    }
}

@Suite struct PagingWithinAPageTests {
    func long(_ n: Int) -> [String] { (1...n).map { "row \($0)" } }
    let small = PagerOptions(size: TerminalSize(columns: 80, rows: 10))

    @Test func spaceReadsOnThenTurnsThePageOnTheLastScreen() {
        var h = Harness(hello: hello(page: 1, version: 3), text: long(20), options: small)
        #expect(h.model.statusText().contains("lines 1-9/20 45% more↓"))
        h.type(" ")
        #expect(h.sent() == [])
        #expect(h.model.screen()[0] == "row 10")
        h.keys(.pageDown)
        #expect(h.model.screen()[0] == "row 12")  // the last screen: 12...20
        #expect(h.model.statusText().contains("lines 12-20/20 100% end"))
        #expect(h.sent() == [])
        h.type("f")
        #expect(h.sent() == ["STATUS"])  // how many read here?
        h.server(statusReply(page: 1, version: 3, clients: 1))
        #expect(h.sent() == ["NEXT IF 3"])  // nobody else: one press turns
        h.reply("OK page=2 pages=6 version=4")
        #expect(h.model.scrollOffset == 0)
    }

    @Test func bScrollsUpThenTurnsBackAtTheTop() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(20), options: small)
        h.type("G")
        #expect(h.model.screen()[8] == "row 20")
        h.type("b")
        #expect(h.model.screen()[0] == "row 3")
        h.keys(.pageUp)
        #expect(h.model.scrollOffset == 0)
        #expect(h.sent() == [])
        h.type("b")
        #expect(h.sent() == ["STATUS"])
        h.server(statusReply(page: 2, version: 3, clients: 1))
        #expect(h.sent() == ["PREV IF 3"])
        h.reply("OK page=1 pages=6 version=4")
        h.answerTexts()
        #expect(h.model.screen()[0] == "text of page 1")
    }

    @Test("b that turns back shows the previous page from its end, so reading backwards is continuous")
    func bTurnsBackToTheEndOfThePreviousPage() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(20), options: small)
        h.type("b")
        h.server(statusReply(page: 2, version: 3, clients: 1))
        #expect(h.sent() == ["STATUS", "PREV IF 3"])
        h.server("OK page=1 pages=6 version=4")
        #expect(h.sent() == ["TEXT 1"])
        h.server(textReply(page: 1, long(30)))
        #expect(h.model.screen()[8] == "row 30")
        #expect(h.model.statusText().contains("lines 22-30/30 100% end"))
        // [ turns back too, but opens at the top, as any page turn does.
        var i = Harness(hello: hello(page: 2, version: 3), text: long(20), options: small)
        i.type("[")
        i.reply("OK page=1 pages=6 version=4")
        i.server(textReply(page: 1, long(30)))
        #expect(i.model.scrollOffset == 0)
        // Detached, b browses back and opens the page at its end as well.
        var d = Harness(hello: hello(page: 2, version: 3), text: long(20), options: small)
        d.type("Db")
        #expect(d.model.mode == .detached(viewPage: 1))
        d.server(textReply(page: 1, long(30)))
        #expect(d.model.screen()[8] == "row 30")
    }

    @Test func topBottomAndCountedLinesMoveOnlyTheScreen() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(40), options: small)
        h.type(">")
        #expect(h.model.scrollOffset == 31)
        h.type("<")
        #expect(h.model.scrollOffset == 0)
        h.keys(.end)
        #expect(h.model.scrollOffset == 31)
        h.keys(.home)
        h.type("12j")
        #expect(h.model.scrollOffset == 12)
        h.type("5k")
        #expect(h.model.scrollOffset == 7)
        h.type("10 ")  // digits then Space: ten lines, not dropped
        #expect(h.model.scrollOffset == 17)
        h.type("3b")
        #expect(h.model.scrollOffset == 14)
        #expect(h.sent() == [])
    }

    @Test func roomKeysTurnWhateverTheScreen() {
        var h = Harness(hello: hello(page: 2, version: 3), text: long(40), options: small)
        h.type("]")
        #expect(h.sent() == ["NEXT IF 3"])
        h.reply("OK page=3 pages=6 version=4")
        _ = h.sent()
        h.type("[")
        #expect(h.sent() == ["PREV IF 4"])
    }

    @Test func followOnlyNeverSendsAChange() {
        var options = small
        options.followOnly = true
        var h = Harness(hello: hello(page: 2, version: 3), text: ["short"], options: options)
        h.type(" ")
        #expect(h.model.message == "follower only (--follow): browsing on your own")
        h.type("]}{:3")
        h.keys(.enter)
        #expect(h.sent().allSatisfy { $0.hasPrefix("TEXT") })
        #expect(h.model.mode == .detached(viewPage: 3))
        #expect(!h.model.statusText().contains("⚑"), "no control mark for a follower")
        h.type("p")
        #expect(h.model.message == "follower only (--follow): this pager never moves the room")
        #expect(h.sent().allSatisfy { $0.hasPrefix("TEXT") })
        h.type("F")
        #expect(h.model.mode == .following)
        h.server(pageEvent(page: 5, version: 9))
        #expect(h.model.displayedPage == 5)
    }
}

@Suite struct StatusMessagesTests {
    @Test func byeReasonSurvivesTheReconnectAttempts() {
        var h = Harness(hello: hello())
        h.server("BYE server shutting down")
        h.event(.disconnected(reason: "the server closed the connection"))
        #expect(h.model.message == "server: server shutting down")
        h.event(.disconnected(reason: "connection refused"))
        #expect(h.model.message == "server: server shutting down")
        #expect(h.model.statusText().contains("server: server shutting down"))
        h.event(.connected)
        h.server(hello())
        #expect(h.model.message == nil)
    }

    /// A daemon restarted with a certificate the pager does not trust: the failure is said first,
    /// not hidden behind the goodbye for good; a refused attempt shows the goodbye alone again.
    @Test func aReconnectThatFailsForAnotherReasonSaysSoAfterTheGoodbye() {
        var h = Harness(hello: hello())
        h.server("BYE server shutting down")
        h.event(.disconnected(reason: "the server closed the connection"))
        h.event(.disconnected(reason: "TLS: unknown CA"))
        #expect(h.model.message == "TLS: unknown CA · server: server shutting down")
        // In full at 80 columns: the reason outranks the follow state ("reconnecting…").
        #expect(h.model.statusText() == "guide · page 1/6 · TLS: unknown CA · server: server shutting down", "\(h.model.statusText())")
        h.event(.resized(TerminalSize(columns: 100, rows: 24)))
        #expect(h.model.statusText().contains("reconnecting… · TLS: unknown CA · server: server shutting down"), "\(h.model.statusText())")
        h.event(.disconnected(reason: "connection refused"))
        #expect(h.model.message == "server: server shutting down")
    }

    @Test func detachKeepsTheRoomNameAndYourNameShows() {
        var h = Harness(hello: hello(name: "ann"))
        #expect(h.model.statusText().hasSuffix("you: ann ⚑"))
        h.type("D")
        let s = h.model.statusText()
        #expect(s.hasPrefix("guide · page 1/6"), "\(s)")
        #expect(s.contains("detached · room on 1/6 · F to follow"), "\(s)")
        var viewer = Harness(hello: hello(control: false, name: "bob"))
        #expect(viewer.model.statusText().hasSuffix("you: bob"))
    }
}

@Suite struct TokenSourceTests {
    @Test func choosing() {
        #expect(TokenSource.choose(token: nil, tokenFile: nil, environment: [:]) == .success(.none))
        #expect(TokenSource.choose(token: nil, tokenFile: nil, environment: ["PAGESYNC_TOKEN": "s3"]) == .success(.value("s3")))
        #expect(TokenSource.choose(token: nil, tokenFile: nil, environment: ["PAGESYNC_TOKEN": ""]) == .success(.none))
        #expect(TokenSource.choose(token: "v", tokenFile: nil, environment: ["PAGESYNC_TOKEN": "s3"]) == .success(.value("v")))
        #expect(TokenSource.choose(token: "-", tokenFile: nil, environment: [:]) == .success(.prompt))
        #expect(TokenSource.choose(token: nil, tokenFile: "/run/t", environment: ["PAGESYNC_TOKEN": "s3"]) == .success(.file("/run/t")))
        #expect(TokenSource.choose(token: "v", tokenFile: "/run/t", environment: [:])
                == .failure(TokenError("give either --token or --token-file, not both")))
        #expect(TokenSource.choose(token: "a b", tokenFile: nil, environment: [:])
                == .failure(TokenError("--token: the token contains spaces or control characters")))
        #expect(TokenSource.choose(token: nil, tokenFile: "", environment: [:]) == .failure(TokenError("--token-file: the path is empty")))
    }

    @Test func fromFileAndPrompt() {
        #expect(TokenSource.token(fromFile: Array("s3cret\n".utf8), path: "f") == .success("s3cret"))
        #expect(TokenSource.token(fromFile: Array("s3cret\r\nignored\n".utf8), path: "f") == .success("s3cret"))
        #expect(TokenSource.token(fromFile: Array("\n".utf8), path: "f") == .failure(TokenError("--token-file f: the token is empty")))
        #expect(TokenSource.token(fromFile: [0xFF, 0x0A], path: "f") == .failure(TokenError("--token-file f: the token is not UTF-8 text")))
        #expect(TokenSource.token(typed: "abc\n") == .success("abc"))
        #expect(TokenSource.token(typed: "\n") == .failure(TokenError("the token prompt: the token is empty")))
    }
}
