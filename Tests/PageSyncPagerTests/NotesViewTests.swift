import PageSyncCore
import Testing
import PageSyncPager

func notesReply(page: Int, pages: Int = 6, doc: String = "d1", _ lines: [String]) -> [String] {
    textReply(page: page, pages: pages, doc: doc, lines, kind: "NOTES")
}

/// Drives a notes view and records what it asks for.
struct NotesHarness {
    var model: NotesViewModel
    var effects: [PagerEffect] = []

    init(_ options: PagerOptions = PagerOptions(colors: .none)) {
        model = NotesViewModel(options: options)
        event(.tick(ClockReading(monotonicMilliseconds: 1_000, hour: 9, minute: 5)))
    }

    @discardableResult mutating func event(_ e: PagerEvent) -> [PagerEffect] {
        let fx = model.handle(e)
        effects += fx
        return fx
    }

    @discardableResult mutating func server(_ lines: String...) -> [PagerEffect] { server(lines) }
    @discardableResult mutating func server(_ lines: [String]) -> [PagerEffect] { lines.flatMap { event(.serverLine($0)) } }
    @discardableResult mutating func keys(_ keys: Key...) -> [PagerEffect] { keys.flatMap { event(.key($0)) } }
    mutating func tick(_ ms: UInt64) { event(.tick(ClockReading(monotonicMilliseconds: ms, hour: 9, minute: 30))) }

    mutating func sent() -> [String] {
        defer { effects = [] }
        return effects.compactMap { if case .send(let c) = $0 { CommandEncoder.line(c) } else { nil } }
    }

    var quit: (status: Int32, message: String?)? {
        for case .quit(let status, let message) in effects { return (status, message) }
        return nil
    }

    /// The screen's rows.
    mutating func screen() -> [String] {
        var frame = model.frame()
        frame.removeFirst(3)  // ESC [ H
        return frame.split(separator: "\u{1B}[K\r\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Connected and greeted in an open room on `page`, notes and the next heading answered.
    static func greeted(page: Int = 1, notes: [String] = ["say hello"], next: [String] = ["# Two", "text"]) -> NotesHarness {
        var h = NotesHarness()
        h.event(.connected)
        h.server(hello(page: page))
        #expect(h.sent() == ["NOTES \(page)", "TEXT \(page + 1)"])
        h.server(notesReply(page: page, notes))
        h.server(textReply(page: page + 1, next))
        return h
    }
}

@Suite struct NotesViewTests {
    @Test func greetingAsksTheNotesOnceAndTheNextHeading() {
        var h = NotesHarness.greeted(page: 2, notes: ["Draw the **coordinator**.", "", "- versions"], next: ["intro", "## Page three", "x"])
        let screen = h.screen()
        #expect(screen[0] == "Speaker notes · room guide · page 2 of 6")
        #expect(screen[1].hasPrefix("Draw the ") && screen[1].contains("coordinator"))
        #expect(screen.contains("  • versions") || screen.contains("• versions") || screen.contains { $0.contains("versions") })
        #expect(screen[22] == "Next: page 3 · intro")
        #expect(screen[23].hasPrefix("page 2/6 · 0:00 since this view started · 09:05 · "))
        #expect(h.sent() == [])
        h.tick(65_500)
        #expect(h.sent() == [], "idle: nothing is asked")
        #expect(h.screen()[23].hasPrefix("page 2/6 · 1:04 since this view started · 09:30"))
    }

    @Test func aPageTurnAsksNotesOnceAndNeverShowsAnotherPagesNotes() {
        var h = NotesHarness.greeted()
        h.server(pageEvent(page: 2, version: 1))
        #expect(h.sent() == ["NOTES 2", "TEXT 3"])
        #expect(h.screen()[1] == "(notes of page 2…)", "page 1's notes went with page 1")
        h.server(pageEvent(page: 2, version: 2))  // the same page again (a line moved, a reload): no new request
        #expect(h.sent() == [])
        h.server(pageEvent(page: 3, version: 3))  // moved on before the answers
        #expect(h.sent() == ["NOTES 3", "TEXT 4"])
        h.server(notesReply(page: 2, ["late: page two"]))
        #expect(!h.screen().contains("late: page two"), "an answer for a page the room left is not shown")
        h.server(textReply(page: 3, ["# Three"]))
        h.server(notesReply(page: 3, ["three's notes"]))
        h.server(textReply(page: 4, ["Four"]))
        #expect(h.screen()[1] == "three's notes")
        #expect(h.screen()[22] == "Next: page 4 · Four")
        h.server(pageEvent(page: 2, version: 4))  // back: the heading of page 3 is kept, the notes asked again
        #expect(h.sent() == ["NOTES 2"])
        #expect(h.model.notesRequests == 4)
    }

    @Test func anEmptyPageOfNotesAndTheLastPage() {
        var h = NotesHarness.greeted(page: 5, notes: [], next: [])
        #expect(h.screen()[1] == "(no notes for page 5)")
        #expect(h.screen()[22] == "Next: page 6 (no text)")
        h.server(pageEvent(page: 6, version: 1))
        #expect(h.sent() == ["NOTES 6"], "no next page to ask for")
        #expect(h.screen()[22] == "Next: (this is the last page)")
    }

    @Test func presenterRoomWithTokenWaitsForAuthThenFetches() {
        var h = NotesHarness(PagerOptions(room: "talk", token: "s3cret", colors: .none))
        h.event(.connected)
        h.server(hello(room: "talk", control: false))
        #expect(h.sent() == ["AUTH s3cret"], "nothing else before control")
        h.server("OK AUTH control=yes")
        #expect(h.sent() == ["NOTES 1", "TEXT 2"])
        #expect(h.quit == nil)
    }

    @Test func withoutControlTheViewQuitsWithOneLine() {
        var h = NotesHarness()
        h.event(.connected)
        h.server(hello(control: false))
        #expect(h.quit?.status == 1)
        #expect(h.quit?.message == "pagesync --notes: speaker notes need control of the room; room guide is a presenter room: give the room's token (--token, --token-file or PAGESYNC_TOKEN)")
        #expect(h.sent() == [])

        var refused = NotesHarness(PagerOptions(token: "wrong", colors: .none))
        refused.event(.connected)
        refused.server(hello(control: false))
        refused.server("ERR 401 wrong token")
        #expect(refused.quit?.message == "pagesync --notes: the server refused the token: wrong token")

        var unknown = NotesHarness(PagerOptions(room: "nope", colors: .none))
        unknown.event(.connected)
        unknown.server(hello())
        #expect(unknown.sent() == ["JOIN nope"])
        unknown.server("ERR 404 no room nope")
        #expect(unknown.quit?.message == "pagesync --notes: cannot join room nope: no room nope")

        var lost = NotesHarness.greeted()
        lost.server(pageEvent(page: 2, version: 1))
        lost.server("ERR 403 notes are for those with control; send AUTH <token>")
        #expect(lost.quit?.status == 1)
    }

    @Test func keysTurnTheRoomOneRequestInFlight() {
        var h = NotesHarness.greeted()
        h.keys(.char("]"))
        #expect(h.sent() == ["NEXT IF 0"])
        h.keys(.pageDown, .right, .char(" "))  // a remote held down: added up
        #expect(h.sent() == [])
        #expect(h.screen()[0].hasSuffix("page 1 of 6"), "nothing moves before the room says so")
        h.server("OK page=2 pages=6 version=1 by=guest-1 doc=d1")
        #expect(h.sent() == ["GOTO 5 IF 1", "NOTES 2", "TEXT 3"])
        h.server("ERR 409 the room changed page=3 pages=6 version=2 by=bob doc=d1")
        #expect(h.sent() == ["NOTES 3", "TEXT 4"], "relative presses from a page the room left are dropped")
        h.server(notesReply(page: 2, ["two"]))  // answers come in the order asked
        h.server(textReply(page: 3, ["three"]))
        h.server(notesReply(page: 3, ["three"]))
        h.server(textReply(page: 4, ["four"]))
        h.keys(.char("4"), .char("2"), .enter)
        #expect(h.model.message == "no page 42: this document has 6 pages")
        h.keys(.char("6"), .enter)
        #expect(h.sent() == ["GOTO 6 IF 2"])
        h.keys(.home)
        h.server("OK page=6 pages=6 version=3 by=guest-1 doc=d1")
        #expect(h.sent() == ["FIRST IF 3", "NOTES 6"])
        h.keys(.char("x"))
        #expect(h.model.message == "x: not a notes view key (h lists them)")
    }

    @Test func notesScrollAndKeysShow() {
        let long = (1...40).map { "note line \($0)" }.joined(separator: "\n\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var h = NotesHarness.greeted(notes: long)
        #expect(h.screen()[1] == "note line 1")
        h.keys(.char("j"), .char("j"))
        #expect(h.screen()[1] == "note line 2")
        h.keys(.char("d"))
        #expect(h.screen()[1] == "note line 7")
        h.keys(.char("k"), .char("u"), .char("u"))
        #expect(h.screen()[1] == "note line 1")
        h.keys(.char("h"))
        #expect(h.screen().contains { $0.hasPrefix("t   restart the timer") })
    }

    @Test func theTimerStartsAtTheFirstTurnAndTRestartsIt() {
        var h = NotesHarness.greeted()
        #expect(h.screen()[23].contains("0:00 (starts at the first page turn)"))
        h.tick(10_000)
        h.server(pageEvent(page: 2, version: 1))
        h.tick(135_000)
        #expect(h.screen()[23].contains("2:05 since the first turn"))
        h.keys(.char("t"))
        h.tick(136_000)
        #expect(h.screen()[23].contains("0:01 since t"))
    }

    @Test func withTheServersIdleTimeoutTheViewPingsInItsSilence() {
        var h = NotesHarness()  // its first tick: 1,000
        h.event(.connected)
        h.server(hello() + " idle=6")
        #expect(h.sent() == ["NOTES 1", "TEXT 2"])
        h.server(notesReply(page: 1, ["say hello"]))
        h.server(textReply(page: 2, ["# Two"]))
        h.tick(2_000)
        #expect(h.sent() == [], "1 s of silence (ticks every second: a PING after 3 s less one)")
        h.tick(3_000)
        #expect(h.sent() == ["PING"])
        h.server("OK PONG")
        #expect(h.model.message == nil)
        h.server(pageEvent(page: 2, version: 1))
        #expect(h.sent() == ["NOTES 2", "TEXT 3"], "a page turn's requests count as sent")
        h.server(notesReply(page: 2, ["two"]))
        h.tick(4_000)
        #expect(h.sent() == [])
        h.tick(5_000)
        #expect(h.sent() == ["PING"])
    }

    @Test func connectionLossReconnectsAndKeepsTheScreen() {
        var h = NotesHarness.greeted()
        h.event(.disconnected(reason: "the server closed the connection"))
        #expect(h.effects.contains { if case .connect = $0 { true } else { false } })
        #expect(h.screen()[1] == "say hello")
        #expect(h.screen()[23].contains("reconnecting… (attempt 1)"))
        _ = h.sent()
        h.event(.connected)
        h.server(hello(page: 1, version: 0))
        #expect(h.sent() == [], "the same page's notes and heading are here")
        var first = NotesHarness()
        first.event(.connected)
        first.event(.disconnected(reason: "connection refused"))
        #expect(first.quit?.message == "pagesync: cannot connect to 127.0.0.1:7777: connection refused")
    }

    @Test func noColourMeansNoEscapesButTheFrame() {
        var h = NotesHarness.greeted(notes: ["**bold** and `code`"])
        let frame = h.model.frame()
        let escapes = frame.filter { $0 == "\u{1B}" }.count
        #expect(escapes == 24, "cursor home and one erase per row, no styles: \(escapes)")
    }
}

@Suite struct NotesPartsTests {
    @Test func headlines() {
        #expect(PageHeadline.of(["", "  ## Second  ##", "x"], markdown: true) == "Second")
        #expect(PageHeadline.of(["Title", "=====", "x"], markdown: true) == "Title")
        #expect(PageHeadline.of(["intro", "", "Sub", "---"], markdown: true) == "Sub")
        #expect(PageHeadline.of(["#nospace", "    # code", "plain"], markdown: true) == "#nospace")
        #expect(PageHeadline.of(["", "  \t", "# not markdown"], markdown: false) == "# not markdown")
        #expect(PageHeadline.of(["\u{1B}[31mred\u{1B}[0m"], markdown: false) == "red")
        #expect(PageHeadline.of(["", " "], markdown: true) == nil)
    }

    @Test func clock() {
        var c = SpeakerClock()
        #expect(c.elapsed(now: 5) == nil)
        c.roomSeen(page: 3, now: nil)
        #expect(c.elapsed(now: 5) == nil, "no reading yet")
        c.ticked(now: 1_000)
        #expect(c.elapsed(now: 62_000) == "1:01 since this view started")
        c.pageTurned(now: 70_000)
        #expect(c.elapsed(now: 71_000) == "1:10 since this view started", "a talk under way keeps its start")
        c.restart(now: 80_000)
        #expect(c.elapsed(now: 80_000 + 3_723_000) == "1:02:03 since t")
        var w = SpeakerClock()
        w.roomSeen(page: 1, now: 0)
        w.roomSeen(page: 4, now: 10)  // only the first sighting counts
        #expect(w.origin == .waitingForFirstTurn)
        w.pageTurned(now: 500)
        #expect(w.elapsed(now: 1_499) == "0:00 since the first turn")
        #expect(SpeakerClock.duration(milliseconds: 59_999) == "0:59")
        #expect(ClockReading(monotonicMilliseconds: 0, hour: 7, minute: 3).wallClock == "07:03")
    }

    @Test func turnQueue() {
        let room = RoomView(name: "r", page: 3, pageCount: 6, version: 9, by: nil, doc: "d", wraps: false, control: true)
        var q = PageTurnQueue()
        q.press(NavigationIntent(base: .current, offset: 1))
        #expect(q.flush(room: room) == .send(.navigate(.next, ifVersion: 9)))
        q.press(NavigationIntent(base: .current, offset: 1))
        #expect(q.flush(room: room) == .nothing, "one in flight")
        q.answered(errorCode: 409, roomPage: 5)
        #expect(q.queued == NavigationIntent(base: .current, offset: 1), "the queued press stays, the answered one is dropped")
        q.press(NavigationIntent(base: .page(2), offset: 0))
        #expect(q.flush(room: room) == .send(.navigate(.goto(PageNumber(2)!), ifVersion: 9)))
        q.answered(errorCode: 409, roomPage: 4)
        #expect(q.queued == NavigationIntent(base: .page(2), offset: 0), "an absolute request is asked again")
        q.answered(errorCode: 403, roomPage: 4)
        #expect(q.queued == nil)
        q.press(NavigationIntent(base: .current, offset: 9))
        let last = RoomView(name: "r", page: 6, pageCount: 6, version: 9, by: nil, doc: "d", wraps: false, control: true)
        #expect(q.flush(room: last) == .nowhere(NavigationIntent(base: .current, offset: 9), edgeMessage: "already on the last page"))
    }

    @Test func keys() {
        for key in [Key.char("]"), .char(" "), .char("n"), .right, .pageDown] { #expect(NotesKeys.action(for: key) == .next) }
        for key in [Key.char("["), .char("p"), .backspace, .left, .pageUp] { #expect(NotesKeys.action(for: key) == .previous) }
        #expect(NotesKeys.action(for: .home) == .first && NotesKeys.action(for: .end) == .last)
        #expect(NotesKeys.action(for: .char("t")) == .restartClock)
        #expect(NotesKeys.action(for: .char("z")) == .unknown(.char("z")))
    }
}
