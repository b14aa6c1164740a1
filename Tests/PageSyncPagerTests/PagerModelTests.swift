import PageSyncCore
import Testing
import PageSyncPager

func hello(room: String = "guide", page: Int = 1, pages: Int = 6, version: UInt64 = 0, by: String = "-",
           doc: String = "d1", wrap: Bool = false, control: Bool = true, name: String = "guest-1") -> String {
    "HELLO pagesync/1 room=\(room) page=\(page) pages=\(pages) version=\(version) by=\(by) doc=\(doc) wrap=\(wrap ? "yes" : "no") control=\(control ? "yes" : "no") name=\(name)"
}

func pageEvent(room: String = "guide", page: Int, pages: Int = 6, version: UInt64, by: String = "ann", doc: String = "d1") -> String {
    "PAGE room=\(room) page=\(page) pages=\(pages) version=\(version) by=\(by) doc=\(doc)"
}

func statusReply(room: String = "guide", page: Int, pages: Int = 6, version: UInt64, doc: String = "d1", clients: Int,
                 control: Bool = true) -> String {
    "OK room=\(room) page=\(page) pages=\(pages) version=\(version) by=- doc=\(doc) epoch=e wrap=no control=\(control ? "yes" : "no") clients=\(clients)"
}

func textReply(page: Int, pages: Int = 6, doc: String = "d1", _ lines: [String]) -> [String] {
    ["OK TEXT page=\(page) pages=\(pages) doc=\(doc) bytes=10 lines=\(lines.count) truncated=no"]
        + lines.map { $0.hasPrefix(".") ? "." + $0 : $0 } + ["."]
}

/// Drives a model and records what it asks for.
struct Harness {
    var model: PagerModel
    var effects: [PagerEffect] = []

    init(_ options: PagerOptions = PagerOptions()) { model = PagerModel(options: options) }

    /// Connects and greets, answering the first TEXT request with `text` (page text for the greeting's page).
    init(hello line: String = hello(), text: [String]? = ["line one", "line two"], options: PagerOptions = PagerOptions()) {
        self.init(options)
        event(.connected)
        let fx = server(line)
        if let text, fx.contains(where: { if case .send(.text) = $0 { true } else { false } }),
           let page = model.displayedPage {
            server(textReply(page: page, doc: model.room?.doc ?? "d1", text))
        }
        effects = []
    }

    /// Commands sent and not answered yet, oldest first.
    var unanswered: [String] = []
    private var inMultiline = false

    @discardableResult mutating func event(_ e: PagerEvent) -> [PagerEffect] {
        switch e {
        case .serverLine(let l):
            if inMultiline { if l == "." { inMultiline = false } }
            else if l.hasPrefix("OK") || l.hasPrefix("ERR") {
                if !unanswered.isEmpty { unanswered.removeFirst() }
                inMultiline = l.hasPrefix("OK TEXT") || l.hasPrefix("OK HELP")
            }
        case .disconnected, .connected: unanswered = []
        default: break
        }
        let fx = model.handle(e)
        effects += fx
        for case .send(let c) in fx { unanswered.append(CommandEncoder.line(c)) }
        return fx
    }

    /// Feeds lines exactly as given.
    @discardableResult mutating func server(_ lines: String...) -> [PagerEffect] { server(lines) }

    @discardableResult mutating func server(_ lines: [String]) -> [PagerEffect] {
        lines.flatMap { event(.serverLine($0)) }
    }

    /// Answers the TEXT requests at the front of the queue with "text of page n", then feeds `line`.
    @discardableResult mutating func reply(_ line: String) -> [PagerEffect] {
        answerTexts()
        return server(line)
    }

    /// Answers the TEXT requests at the front of the queue with "text of page n".
    mutating func answerTexts() {
        while let first = unanswered.first, first.hasPrefix("TEXT "), let page = Int(first.dropFirst(5)) {
            server(textReply(page: page, pages: model.room?.pageCount ?? 6, doc: model.room?.doc ?? "d1", ["text of page \(page)"]))
        }
    }

    @discardableResult mutating func keys(_ keys: Key...) -> [PagerEffect] { keys.flatMap { event(.key($0)) } }

    @discardableResult mutating func type(_ s: String) -> [PagerEffect] { s.flatMap { event(.key(.char($0))) } }

    /// The command lines sent since the last call, and forget them.
    mutating func sent() -> [String] {
        defer { effects = [] }
        return effects.compactMap { if case .send(let c) = $0 { CommandEncoder.line(c) } else { nil } }
    }
}

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

@Suite struct DetachTests {
    @Test func detachBrowsesLocallyAndFollowSnapsBack() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("D")
        #expect(h.model.mode == .detached(viewPage: 2))
        h.type("  ")
        #expect(h.model.mode == .detached(viewPage: 4))
        #expect(h.sent() == ["TEXT 3", "TEXT 4"])
        h.server(textReply(page: 3, ["three"]))
        h.server(textReply(page: 4, ["four"]))
        h.server(pageEvent(page: 6, version: 5))  // the room moves on; the view stays
        #expect(h.model.displayedPage == 4)
        #expect(h.model.screen()[0] == "four")
        // At 80 columns your name gives way before the dots.
        #expect(h.model.statusText() == "guide · page 4/6 ○ ○ ○ ● ○ ○ · detached · room on 6/6 · F to follow")
        h.type("{}:5")
        h.keys(.enter)
        #expect(h.model.mode == .detached(viewPage: 5))
        #expect(h.sent().allSatisfy { $0.hasPrefix("TEXT") })
        h.type("F")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 6)
        #expect(h.sent() == [])  // page 6 was already asked for while browsing
        h.answerTexts()
        #expect(h.model.screen()[0] == "text of page 6")
    }

    @Test func detachedEdgesAndBadPages() {
        var h = Harness(hello: hello(page: 1, version: 4))
        h.type("Db")
        #expect(h.model.message == "already on the first page")
        h.type(":9")
        h.keys(.enter)
        #expect(h.model.message == "no page 9: this document has 6 pages")
        #expect(h.model.mode == .detached(viewPage: 1))
    }

    @Test func presenterRoomWithoutControlBrowsesLocally() {
        var h = Harness(hello: hello(page: 7, pages: 20, version: 4, control: false))
        h.type(" ")
        #expect(h.sent() == ["TEXT 8"])  // never a navigation command
        #expect(h.model.mode == .detached(viewPage: 8))
        h.server(textReply(page: 8, pages: 20, ["eight"]))
        let status = h.model.statusText()
        #expect(status.contains("room on 7/20 · F to follow"))
        #expect(status.contains("page  8/20"))
        h.type("p")
        #expect(h.sent() == [])
        #expect(h.model.message == "pulling the room needs control (start pagesync with --token)")
        h.type("F")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 7)
    }

    @Test func pullBringsTheRoomHereAndFollows() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("D  ")
        _ = h.sent()
        h.type("p")
        #expect(h.sent() == ["GOTO 4 IF 4"])
        #expect(h.model.mode == .detached(viewPage: 4))
        h.reply("OK page=4 pages=6 version=5")
        #expect(h.model.mode == .following)
        #expect(h.model.displayedPage == 4)
    }

    @Test func pullRetriesOnConflict() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("D   p")
        _ = h.sent()
        h.reply("ERR 409 version is 6, not 4 page=1 pages=6 version=6 by=bob doc=d1")
        #expect(h.sent() == ["GOTO 5 IF 6"])
        h.reply("OK page=5 pages=6 version=7")
        #expect(h.model.mode == .following)
    }

    @Test func pullWhenTheRoomIsAlreadyThereJustFollows() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("D ")
        h.server(pageEvent(page: 3, version: 5))  // someone else took the room there
        _ = h.sent()
        #expect(h.model.mode == .detached(viewPage: 3))
        h.type("p")
        #expect(h.sent() == [])
        #expect(h.model.mode == .following)
    }

    @Test func nothingElseDetaches() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("jkdu/line\rnNwwh")
        h.keys(.char("q"), .ctrl("l"), .up, .down, .enter)
        h.server(pageEvent(page: 5, version: 9))
        h.event(.disconnected(reason: "gone"))
        h.event(.connected)
        h.server(hello(page: 5, version: 9))
        #expect(h.model.mode == .following)
    }
}

@Suite struct ConnectionTests {
    @Test func firstConnectionFailureQuits() {
        var h = Harness(PagerOptions(server: "127.0.0.1:7777"))
        let fx = h.event(.disconnected(reason: "connection refused"))
        #expect(fx == [.quit(status: 1, message: "pagesync: cannot connect to 127.0.0.1:7777: connection refused")])
    }

    @Test func aServerThatIsNotPagesyncSaysSoAtOnce() {
        // `pagesync host:22`: the first line is no greeting. Said at once, in one line (it sat
        // on "connecting…" for ever before).
        var h = Harness(PagerOptions(server: "h:22"))
        h.event(.connected)
        let fx = h.server("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3")
        #expect(fx == [.quit(status: 1, message: "pagesync: cannot connect to h:22: not a pagesync server (it said: SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3)")])
        // What it said is shown as plain text, and cut.
        var noisy = Harness(PagerOptions(server: "h:25"))
        noisy.event(.connected)
        let said = noisy.server("220 \u{1B}]0;owned\u{7}mail " + String(repeating: "x", count: 200))
        guard case .quit(1, let message?) = said.first else { Issue.record("no quit: \(said)"); return }
        #expect(!message.contains("\u{1B}"))
        #expect(message.count < 160)
        // After a greeting was seen once, a stranger on reconnect is retried like any failure.
        var h2 = Harness(hello: hello(), text: ["a"], options: PagerOptions(server: "h:1"))
        h2.event(.disconnected(reason: "gone"))
        h2.event(.connected)
        let again = h2.server("HTTP/1.1 400 Bad Request")
        #expect(again.contains { if case .connect = $0 { true } else { false } })
        #expect(h2.model.message == "not a pagesync server (it said: HTTP/1.1 400 Bad Request)")
        // The greeting, an ERR (server full) or a BYE first are all pagesync.
        h2.event(.connected)
        h2.server(hello(page: 2))
        #expect(h2.model.connection == .connected)
    }

    @Test func serverFullIsTheReasonGiven() {
        var h = Harness(PagerOptions(server: "h:1"))
        h.event(.connected)
        h.server("ERR 503 server full")
        let fx = h.event(.disconnected(reason: "end of file"))
        #expect(fx == [.quit(status: 1, message: "pagesync: cannot connect to h:1: server full")])
    }

    @Test func firstConnectionCanRetryInstead() {
        var h = Harness(PagerOptions(quitIfFirstConnectionFails: false))
        let fx = h.event(.disconnected(reason: "refused"))
        #expect(fx.count == 2)
        guard case .connect(let ms) = fx[0] else { Issue.record("no reconnect"); return }
        #expect((50...100).contains(ms))
        #expect(h.model.connection == .connecting)
    }

    @Test func dropKeepsTheScreenAndReconnectsWithBackoff() {
        var h = Harness(hello: hello(page: 2, version: 4), options: PagerOptions(randomSeed: 7))
        var delays: [Int] = []
        for _ in 0..<10 {
            for e in h.event(.disconnected(reason: "connection reset")) {
                if case .connect(let ms) = e { delays.append(ms) }
            }
        }
        #expect(delays.count == 10)
        #expect((50...100).contains(delays[0]))
        #expect((100...200).contains(delays[1]))
        #expect((2500...5000).contains(delays[9]))
        #expect(delays.allSatisfy { $0 <= 5000 })
        #expect(h.model.connection == .reconnecting(attempt: 10))
        #expect(h.model.screen()[0] == "line one")
        #expect(h.model.statusText().contains("reconnecting…"))
        h.event(.connected)
        h.server(hello(page: 2, version: 4))
        #expect(h.model.connection == .connected)
        guard case .connect(let ms) = h.event(.disconnected(reason: "x"))[0] else { Issue.record("no reconnect"); return }
        #expect(ms <= 100)  // backoff starts over after a greeting
    }

    @Test func reconnectResetsTheRequestInFlight() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("]]]")
        #expect(h.sent() == ["NEXT IF 4"])
        h.event(.disconnected(reason: "connection reset"))
        #expect(h.model.navigationInFlight.map(CommandEncoder.line) == nil)
        h.type("]")
        #expect(h.sent() == [])
        #expect(h.model.message == "not connected: page turns need the server")
        h.event(.connected)
        h.server(hello(page: 3, version: 5))  // the lost NEXT did happen
        #expect(h.sent() == ["TEXT 3"])  // nothing else: pending presses were dropped
        h.type("]")
        #expect(h.sent() == ["NEXT IF 5"])
    }

    @Test func unansweredTextIsAskedAgainAfterReconnect() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.server(pageEvent(page: 3, version: 5))
        #expect(h.sent() == ["TEXT 3"])
        h.event(.disconnected(reason: "gone"))
        h.event(.connected)
        h.server(hello(page: 3, version: 5))
        #expect(h.sent() == ["TEXT 3"])
    }

    @Test func handshakeRejoinsNamesAndAuthenticatesThenNavigates() {
        var h = Harness(PagerOptions(room: "slides", name: "ann", token: "s3cret"))
        h.event(.connected)
        h.server(hello(room: "guide", page: 1, version: 0))
        #expect(h.sent() == ["NAME ann", "JOIN slides", "AUTH s3cret"])
        h.type("]")  // pressed during the handshake: waits
        #expect(h.sent() == [])
        h.server("OK NAME ann")
        #expect(h.model.clientName == "ann")
        h.server("OK JOIN room=slides page=4 pages=12 version=30 by=bob doc=s1 wrap=yes control=no name=ann")
        #expect(h.model.room?.name == "slides")
        #expect(h.sent() == ["TEXT 4"])
        h.server("OK AUTH control=yes")
        #expect(h.model.room?.control == true)
        #expect(h.sent() == ["NEXT IF 30"])
    }

    @Test func reconnectRejoinsTheRoomItWasIn() {
        var h = Harness(PagerOptions(room: "slides"))
        h.event(.connected)
        h.server(hello(room: "guide"))
        #expect(h.sent() == ["JOIN slides"])
        h.server("ERR 404 no room \"slides\"")
        #expect(h.model.message == "no room \"slides\"")
        #expect(h.model.room?.name == "guide")
    }

    @Test func byeAndStrayErrorsShowButNeverQuit() {
        var h = Harness(hello: hello())
        let fx = h.server("ERR 413 line longer than 4096 bytes")
        #expect(fx == [.repaint])
        #expect(h.model.message == "line longer than 4096 bytes")  // shown as it is; said as the server's reason only on a close
        h.server("BYE server shutting down")
        #expect(h.model.message == "server: server shutting down")
    }
}

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

@Suite struct ReconnectBackoffTests {
    @Test func backoff() {
        #expect(ReconnectBackoff.delay(attempt: 1, unitRandom: 0) == 50)
        #expect(ReconnectBackoff.delay(attempt: 1, unitRandom: 1) == 100)
        #expect(ReconnectBackoff.delay(attempt: 3, unitRandom: 1) == 400)
        #expect(ReconnectBackoff.delay(attempt: 7, unitRandom: 1) == 5000)
        #expect(ReconnectBackoff.delay(attempt: 1000, unitRandom: 0.5) == 3750)
    }
}
