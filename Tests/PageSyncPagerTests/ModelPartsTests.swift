import PageSyncCore
import Testing
import PageSyncPager

@Suite struct PromptInputTests {
    @Test func countsCollectDigitsThenGoToTheKey() {
        #expect(PromptInput.edit(.count("1"), .char("2")) == .editing(.count("12")))
        #expect(PromptInput.edit(.count("123456789012"), .char("3")) == .editing(.count("123456789012")))
        #expect(PromptInput.edit(.count("12"), .backspace) == .editing(.count("1")))
        #expect(PromptInput.edit(.count("1"), .backspace) == .editing(nil))
        #expect(PromptInput.edit(.count("12"), .char("j")) == .countThen(12, .char("j")))
        #expect(PromptInput.edit(.count("3"), .char(" ")) == .countThen(3, .char(" ")))
        #expect(PromptInput.edit(.count("3"), .escape) == .editing(nil))
    }

    @Test func searchTakesTextUntilEnter() {
        #expect(PromptInput.edit(.search(forward: true, "ab"), .char("c")) == .editing(.search(forward: true, "abc")))
        #expect(PromptInput.edit(.search(forward: false, "ab"), .tab) == .editing(.search(forward: false, "ab ")))
        #expect(PromptInput.edit(.search(forward: true, "ab"), .backspace) == .editing(.search(forward: true, "a")))
        #expect(PromptInput.edit(.search(forward: true, ""), .backspace) == .editing(nil))
        #expect(PromptInput.edit(.search(forward: false, "x"), .enter) == .search(pattern: "x", forward: false))
        #expect(PromptInput.edit(.search(forward: true, "x"), .up) == .editing(.search(forward: true, "x")))
        #expect(PromptInput.edit(.search(forward: true, "x"), .escape) == .editing(nil))
    }

    @Test func filterTakesTextUntilEnter() {
        #expect(PromptInput.edit(.filter("a"), .char("b")) == .editing(.filter("ab")))
        #expect(PromptInput.edit(.filter("a"), .tab) == .editing(.filter("a ")))
        #expect(PromptInput.edit(.filter("ab"), .backspace) == .editing(.filter("a")))
        #expect(PromptInput.edit(.filter(""), .backspace) == .editing(nil))
        #expect(PromptInput.edit(.filter("!x"), .enter) == .filter("!x"))
        #expect(PromptInput.edit(.filter(""), .enter) == .filter(""))
        #expect(PromptInput.edit(.filter("x"), .up) == .editing(.filter("x")))
        #expect(PromptInput.edit(.filter("x"), .escape) == .editing(nil))
    }
}

@Suite struct HelpScreenTests {
    @Test func scrollsAndCloses() {
        var h = HelpScreen()
        var close = false
        #expect(h.handle(.char("j"), halfPage: 5, close: &close) && h.offset == 1)
        #expect(h.handle(.char(" "), halfPage: 5, close: &close) && h.offset == 11, "Space: a whole screen, as on a page")
        #expect(h.handle(.char("b"), halfPage: 5, close: &close) && h.offset == 1)
        #expect(h.handle(.char("d"), halfPage: 5, close: &close) && h.offset == 6)
        #expect(h.handle(.char("u"), halfPage: 5, close: &close) && h.offset == 1)
        #expect(h.handle(.char("k"), halfPage: 5, close: &close) && h.handle(.up, halfPage: 5, close: &close))
        #expect(h.offset == 0)
        #expect(!h.handle(.char("z"), halfPage: 5, close: &close))
        #expect(!close)
        #expect(h.handle(.char("q"), halfPage: 5, close: &close) && close)
        _ = h.handle(.char("d"), halfPage: 50, close: &close)
        h.clamp(maxOffset: 7)
        #expect(h.offset == 7)
    }

    @Test(arguments: [Key.char("G"), .char(">"), .end])
    func endKeysGoToTheLastScreen(key: Key) {
        var h = HelpScreen()
        var close = false
        #expect(h.handle(key, halfPage: 5, close: &close) && !close)
        h.clamp(maxOffset: 23)
        #expect(h.offset == 23)
    }

    @Test(arguments: [Key.char("g"), .char("<"), .home])
    func topKeysGoToTheTop(key: Key) {
        var h = HelpScreen()
        var close = false
        _ = h.handle(.char("d"), halfPage: 9, close: &close)
        #expect(h.offset == 9)
        #expect(h.handle(key, halfPage: 9, close: &close) && h.offset == 0 && !close)
    }
}

/// The split model's search rules, now on search's ``PageSearch`` (regex, case-smart).
@Suite struct PageSearchSplitTests {
    let lines = ["Alpha", "beta", "ALPHA again", "gamma \u{1B}[1malpha\u{1B}[0m"]

    @Test func caseSmartBothWays() throws {
        let alpha = try SearchPattern("alpha"), capital = try SearchPattern("Alpha"), delta = try SearchPattern("delta")
        #expect(PageSearch.find(alpha, in: lines, from: -1, forward: true) == 0)
        #expect(PageSearch.find(alpha, in: lines, from: 0, forward: true) == 2)
        #expect(PageSearch.find(alpha, in: lines, from: 2, forward: true) == 3)  // styles are not text
        #expect(PageSearch.find(capital, in: lines, from: 0, forward: true) == nil)  // a capital: exact case
        #expect(PageSearch.find(alpha, in: lines, from: 3, forward: false) == 2)
        #expect(PageSearch.find(delta, in: lines, from: -1, forward: true) == nil)
    }
}

@Suite struct RoomUpdatesTests {
    let room = RoomView(name: "guide", page: 2, pageCount: 6, version: 5, epoch: "e1", by: "ann", doc: "d1",
                        wraps: false, control: true)

    @Test func newerReplacesOlderIsIgnoredOtherRoomsAreNotNews() throws {
        let newer = try #require(WireLine(parsing: "PAGE room=guide page=4 pages=6 version=6 by=bob doc=d1 epoch=e1"))
        #expect(RoomUpdates.reconciled(room, with: newer)?.page == 4)
        #expect(RoomUpdates.reconciled(room, with: newer)?.by == "bob")
        let older = try #require(WireLine(parsing: "PAGE room=guide page=1 pages=6 version=4 by=bob doc=d1 epoch=e1"))
        #expect(RoomUpdates.reconciled(room, with: older) == room)
        let other = try #require(WireLine(parsing: "PAGE room=slides page=1 pages=6 version=9 by=bob doc=d1 epoch=e1"))
        #expect(RoomUpdates.reconciled(room, with: other) == nil)
        let reset = try #require(WireLine(parsing: "PAGE room=guide page=1 pages=3 version=1 by=- doc=d2 epoch=e2"))
        let r = RoomUpdates.reconciled(room, with: reset)
        #expect(r?.page == 1 && r?.version == 1 && r?.by == nil && r?.epoch == "e2")
    }

    @Test func fullViewNeedsEveryField() throws {
        let hello = try #require(WireLine(parsing: "HELLO pagesync/1 room=guide page=9 pages=6 version=3 by=- doc=d1 epoch=e wrap=yes control=no name=guest-1"))
        let v = RoomUpdates.fullView(hello, control: false)
        #expect(v == RoomView(name: "guide", page: 6, pageCount: 6, version: 3, epoch: "e", by: nil, doc: "d1", wraps: true, control: false))
        let bare = try #require(WireLine(parsing: "HELLO pagesync/1 room=guide"))
        #expect(RoomUpdates.fullView(bare, control: true) == nil)
    }
}

@Suite struct JitterRandomTests {
    @Test func sameSeedSameValuesInRange() {
        var a = JitterRandom(seed: 42)
        var b = JitterRandom(seed: 42)
        for _ in 0..<100 {
            let x = a.next()
            #expect(x == b.next())
            #expect(x >= 0 && x < 1)
        }
    }
}
