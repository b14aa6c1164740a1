import PageSyncCore
import Testing
import PageSyncPager

@Suite struct ReconcileTests {
    @Test func greetingSetsStateAndFetchesText() {
        var h = Harness()
        h.event(.connected)
        #expect(h.model.connection == .connecting)
        h.server(hello(page: 3, version: 7, by: "ann"))
        #expect(h.model.room == RoomView(name: "guide", page: 3, pageCount: 6, version: 7, by: "ann", doc: "d1", wraps: false, control: true))
        #expect(h.model.connection == .connected)
        #expect(h.model.clientName == "guest-1")
        #expect(h.sent() == ["TEXT 3"])
        h.server(textReply(page: 3, ["hello", ".dotted"]))
        let screen = h.model.screen()
        #expect(screen.count == 24)
        #expect(screen[0] == "hello")
        #expect(screen[1] == ".dotted")
        #expect(screen[2] == "~")
        #expect(screen[23] == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann · you: guest-1 ⚑")
        #expect(h.sent() == [])
    }

    @Test func newerVersionsReplaceOlderAreIgnored() {
        var h = Harness(hello: hello(page: 2, version: 5))
        h.server(pageEvent(page: 4, version: 7))
        #expect(h.model.room?.page == 4)
        h.server(pageEvent(page: 3, version: 6))  // late and stale
        #expect(h.model.room?.page == 4)
        #expect(h.model.room?.version == 7)
        h.server(pageEvent(page: 1, version: 7, by: "bob"))  // same version: fills in, never moves
        #expect(h.model.room?.page == 4)
        #expect(h.model.room?.by == "bob")
        h.server(pageEvent(page: 5, version: 100))  // missed many events: the next one is enough
        #expect(h.model.room?.page == 5)
    }

    @Test func eventsForAnotherRoomAreIgnored() {
        var h = Harness(hello: hello(page: 2, version: 5))
        h.server(pageEvent(room: "other", page: 6, version: 9))
        #expect(h.model.room?.page == 2)
    }

    @Test func followingFetchesEachPageOnceAndCaches() {
        var h = Harness(hello: hello())
        h.server(pageEvent(page: 2, version: 1))
        #expect(h.sent() == ["TEXT 2"])
        h.server(textReply(page: 2, ["two"]))
        #expect(h.model.screen()[0] == "two")
        h.server(pageEvent(page: 1, version: 2))
        #expect(h.sent() == [])  // page 1 is cached
        #expect(h.model.screen()[0] == "line one")
        h.server(pageEvent(page: 1, version: 3, doc: "d2"))  // the document changed
        #expect(h.sent() == ["TEXT 1"])
        #expect(h.model.screen()[0] == "loading page 1…")
    }

    @Test func pageCountShrinkClampsDetachedView() {
        var h = Harness(hello: hello())
        h.type("D}}")
        h.type("}")
        #expect(h.model.mode == .detached(viewPage: 6))
        h.server(pageEvent(page: 1, pages: 4, version: 1, doc: "d2"))
        #expect(h.model.mode == .detached(viewPage: 4))
    }

    @Test func greetingAfterReconnectIsTakenWholeEvenIfOlder() {
        var h = Harness(hello: hello(page: 5, version: 40))
        h.event(.disconnected(reason: "connection reset"))
        h.event(.connected)
        h.server(hello(page: 2, version: 3))  // the daemon lost its state: it is still the truth
        #expect(h.model.room?.page == 2)
        #expect(h.model.room?.version == 3)
        h.server(pageEvent(page: 3, version: 4))
        #expect(h.model.room?.page == 3)
    }
}

@Suite struct NavigationTests {
    @Test func nextSendsConditionalCommandAndWaitsForTheServer() {
        var h = Harness(hello: hello(page: 1, version: 7))
        h.type("]")
        #expect(h.sent() == ["NEXT IF 7"])
        #expect(h.model.room?.page == 1)  // no optimistic move
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "NEXT IF 7")
        h.reply("OK page=2 pages=6 version=8")
        #expect(h.model.room?.page == 2)
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
        #expect(h.sent() == ["TEXT 2"])
        h.answerTexts()
        h.server(pageEvent(page: 2, version: 8, by: "guest-1"))
        #expect(h.model.room?.by == "guest-1")
        #expect(h.sent() == [])
    }

    @Test("] [ :n :p turn the page at once, <n>] n pages on", arguments: [
        ("]", "NEXT IF 3"), ("[", "PREV IF 3"), (":n", "NEXT IF 3"), (":p", "PREV IF 3"), ("3]", "GOTO 5 IF 3"), ("2[", "GOTO 1 IF 3"),
    ])
    func nextAndPreviousKeys(_ keys: String, _ command: String) {
        var h = Harness(hello: hello(page: 2, version: 3))
        h.type(keys)
        #expect(h.sent() == [command])
    }

    @Test("the edge keys in a room of one: STATUS first, then the turn", arguments: [Key.char(" "), .char("f"), .pageDown])
    func nextKeysAtTheEnd(_ key: Key) {
        var h = Harness(hello: hello(page: 2, version: 3))
        h.keys(key)
        #expect(h.sent() == ["STATUS"])
        h.server(statusReply(page: 2, version: 3, clients: 1))
        #expect(h.sent() == ["NEXT IF 3"])
    }

    @Test(arguments: [Key.char("b"), .pageUp])
    func previousKeysAtTheTop(_ key: Key) {
        var h = Harness(hello: hello(page: 2, version: 3))
        h.keys(key)
        #expect(h.sent() == ["STATUS"])
        h.server(statusReply(page: 2, version: 3, clients: 1))
        #expect(h.sent() == ["PREV IF 3"])
    }

    @Test func firstLastAndGoto() {
        var h = Harness(hello: hello(page: 3, version: 3))
        h.type("{")
        #expect(h.sent() == ["FIRST IF 3"])
        h.reply("OK page=1 pages=6 version=4")
        _ = h.sent()
        h.type("}")
        #expect(h.sent() == ["LAST IF 4"])
        h.reply("OK page=6 pages=6 version=5")
        _ = h.sent()
        h.type(":4")
        #expect(h.model.statusText() == ":4 · Enter: page 4")
        h.keys(.enter)
        #expect(h.sent() == ["GOTO 4 IF 5"])
        h.reply("OK page=4 pages=6 version=6")
        _ = h.sent()
        h.type(":")
        #expect(h.model.statusText().hasPrefix(": · n p: next, previous page"))
        h.type("2")
        h.keys(.enter)
        #expect(h.sent() == ["GOTO 2 IF 6"])
        h.reply("OK page=2 pages=6 version=7")
        _ = h.sent()
        h.type(":15")
        h.keys(.backspace)
        h.keys(.enter)
        #expect(h.sent() == ["GOTO 1 IF 7"])
        h.type(":x")
        #expect(h.model.message == ":x: not a pagesync command (:n :p :<page> Enter)")
        h.type(":")
        h.keys(.escape)
        #expect(h.model.statusText().hasPrefix("guide · page 2/6"), "Esc closes the prompt")
    }

    @Test func gotoPastTheEndAsksAndShowsTheError() {
        var h = Harness(hello: hello(page: 1, version: 0))
        h.type(":9")
        h.keys(.enter)
        #expect(h.sent() == ["GOTO 9 IF 0"])
        h.reply("ERR 404 no page 9: this document has 6 pages")
        #expect(h.model.message == "no page 9: this document has 6 pages")
        #expect(h.model.statusText().hasSuffix("no page 9: this document has 6 pages"))
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
    }

    @Test func digitsThenOtherKeyCancelsAndActs() {
        var h = Harness(hello: hello(page: 1, version: 0))
        h.type("3")
        h.keys(.escape)
        #expect(h.sent() == [])
        h.type("]")
        #expect(h.sent() == ["NEXT IF 0"])
        h.type(":0")
        h.keys(.enter)
        #expect(h.model.message == "page numbers start at 1")
    }

    @Test func movesThatGoNowhereAreNotSent() {
        var h = Harness(hello: hello(page: 1, version: 0))
        h.type("{")
        h.type(":1")
        h.keys(.enter)
        h.type("b")
        #expect(h.sent() == [])
        #expect(h.model.message == "already on the first page")
        var last = Harness(hello: hello(page: 6, version: 2))
        last.type(" ")
        #expect(last.sent() == [])
        #expect(last.model.message == "already on the last page")
        last.type("}")
        #expect(last.sent() == [])
    }

    @Test func wrappingRoomSendsNextOnTheLastPage() {
        var h = Harness(hello: hello(page: 6, version: 2, wrap: true))
        h.type("]")
        #expect(h.sent() == ["NEXT IF 2"])
    }

    @Test func heldKeyCoalescesIntoOneRequest() {
        var h = Harness(hello: hello(page: 1, version: 10))
        h.type("]]]]")  // four presses
        #expect(h.sent() == ["NEXT IF 10"])
        h.reply("OK page=2 pages=6 version=11")
        // The three presses made meanwhile go out as one request from the fresh state;
        // the page passed on the way is not fetched.
        #expect(h.sent() == ["GOTO 5 IF 11"])
        h.reply("OK page=5 pages=6 version=12")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
        #expect(h.model.room?.page == 5)
    }

    @Test func netZeroPressesSendNothingMore() {
        var h = Harness(hello: hello(page: 3, version: 1))
        h.type("]")
        h.type("][[]")
        h.reply("OK page=4 pages=6 version=2")
        #expect(h.sent().filter { !$0.hasPrefix("TEXT") } == ["NEXT IF 1"])
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
    }

    @Test func coalescedPressesBecomeNextWhenNetOne() {
        var h = Harness(hello: hello(page: 3, version: 1))
        h.type("]")
        h.type("]][")
        h.reply("OK page=4 pages=6 version=2")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "NEXT IF 2")
    }

    @Test func coalescedPressesClampAtTheEnd() {
        var h = Harness(hello: hello(page: 4, version: 1))
        h.type("]]]]]")
        h.reply("OK page=5 pages=6 version=2")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "GOTO 6 IF 2")
    }

    @Test func coalescedPressesWrapInAWrappingRoom() {
        var h = Harness(hello: hello(page: 5, version: 1, wrap: true))
        h.type("]]]")
        h.reply("OK page=6 pages=6 version=2")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "GOTO 2 IF 2")
    }

    @Test func gotoAfterPressesReplacesThemAndLaterPressesAddToIt() {
        var h = Harness(hello: hello(page: 1, version: 1))
        h.type("]]")
        h.type(":5")
        h.keys(.enter)
        h.type("]")
        h.reply("OK page=2 pages=6 version=2")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "GOTO 6 IF 2")
        var i = Harness(hello: hello(page: 3, version: 1))
        i.type("]")
        i.type("{")
        i.reply("OK page=4 pages=6 version=2")
        #expect(i.model.navigationInFlight == .navigate(.first, ifVersion: 2))
    }

    @Test func twoPeoplePressingNextMoveTheRoomOnce() {
        // Both saw page 3 at version 7; the other one's NEXT won.
        var h = Harness(hello: hello(page: 3, version: 7))
        h.type("]")
        #expect(h.sent() == ["NEXT IF 7"])
        h.server(pageEvent(page: 4, version: 8, by: "bob"))
        h.reply("ERR 409 version is 8, not 7 page=4 pages=6 version=8 by=bob doc=d1")
        #expect(h.sent() == ["TEXT 4"])  // no second NEXT
        #expect(h.model.room?.page == 4)
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
        #expect(h.model.message == nil)  // a lost race is not an error to show
    }

    @Test func conflictWithoutAPageChangeRetries() {
        // The version moved (say the document was reloaded) but the page did not: ask again.
        var h = Harness(hello: hello(page: 3, version: 7))
        h.type("]")
        _ = h.sent()
        h.reply("ERR 409 version is 8, not 7 page=3 pages=6 version=8 by=- doc=d1")
        #expect(h.sent() == ["NEXT IF 8"])
    }

    @Test func conflictKeepsLaterPressesRelativeToTheFreshPage() {
        var h = Harness(hello: hello(page: 1, version: 7))
        h.type("]]]")  // one in flight, two pending
        _ = h.sent()
        h.reply("ERR 409 version is 8, not 7 page=2 pages=6 version=8 by=bob doc=d1")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "GOTO 4 IF 8")
    }

    @Test func conflictOnGotoRetriesTheSameTarget() {
        var h = Harness(hello: hello(page: 1, version: 7))
        h.type(":5")
        h.keys(.enter)
        _ = h.sent()
        h.reply("ERR 409 version is 9, not 7 page=2 pages=6 version=9 by=bob doc=d1")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == "GOTO 5 IF 9")
        h.reply("ERR 409 version is 10, not 9 page=5 pages=6 version=10 by=cy doc=d1")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)  // someone else already took the room there
    }

    @Test func pastTheEndShowsTheErrorAndReconciles() {
        var h = Harness(hello: hello(page: 5, version: 7))
        h.type("]")
        _ = h.sent()
        h.reply("ERR 416 already on the last page page=6 pages=6 version=8")
        #expect(h.model.room?.page == 6)
        #expect(h.model.message == "already on the last page")
    }

    @Test func forbiddenDropsPendingPresses() {
        var h = Harness(hello: hello(page: 2, version: 7))
        h.type("]]]")
        _ = h.sent()
        h.reply("ERR 403 this room needs a control token; send AUTH <token>")
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
        #expect(h.model.room?.control == false)
        #expect(h.sent() == [])
        #expect(h.model.message == "this room needs a control token; send AUTH <token>")
    }

    @Test func repliesMatchRequestsInOrder() {
        // A TEXT reply and a navigation reply in flight at once.
        var g = Harness()
        g.event(.connected)
        g.server(hello(page: 1, version: 0))
        g.type("]")
        #expect(g.sent() == ["TEXT 1", "NEXT IF 0"])
        g.server(textReply(page: 1, ["first"]))
        g.server("OK page=2 pages=6 version=1")
        #expect(g.model.room?.page == 2)
        #expect(g.sent() == ["TEXT 2"])
    }
}
