import PageSyncCore
import Testing
import PageSyncPager

/// The audience in the pager: VIEW as the screen detaches and snaps back, wanderers brought
/// back by the room's next page turn (D pins), the hand, and a presenter's counts.
@Suite struct AudiencePagerTests {
    @Test func viewFollowsTheScreen() {
        var h = Harness(hello: hello(page: 2, version: 4))
        h.type("D")
        h.type(" ")
        _ = h.sent()
        h.answerTexts()
        h.type("F")
        _ = h.sent()
        #expect(h.presenceSent == ["VIEW BROWSE 2", "VIEW BROWSE 3", "VIEW FOLLOW"])
    }

    @Test func aWandererComesBackWithTheRoomsNextTurnOnlyDPins() {
        var h = Harness(hello: hello(page: 2, version: 4, control: false))
        h.type("]")  // no control: pages on its own
        #expect(h.model.mode == .detached(viewPage: 3))
        h.answerTexts()
        h.server(pageEvent(page: 4, version: 5))
        #expect(h.model.mode == .following)
        #expect(h.model.message == "page 4: following the room again (D browses on your own until F)")
        h.type("D")
        h.server(pageEvent(page: 5, version: 6))
        #expect(h.model.mode == .detached(viewPage: 4), "D pins")
        h.type("F")
        h.type("]")
        h.answerTexts()
        h.server(pageEvent(page: 6, version: 7))
        #expect(h.model.mode == .following, "F unpinned: paging away is wandering again")
        _ = h.sent()
        #expect(h.presenceSent.last == "VIEW FOLLOW")
    }

    @Test func handAndAPresentersCounts() {
        var h = Harness.presenter(columns: 120, rows: 10)
        h.server("AUDIENCE room=guide following=12 browsing=3 hands=1 first=bob")
        #expect(h.model.statusText().contains("12 following · 3 browsing · 1 hand (bob)"), "\(h.model.statusText())")
        h.type("A")
        _ = h.sent()
        #expect(h.presenceSent == ["HAND UP"])
        #expect(h.model.handUp)
        h.keys(.escape)
        #expect(h.model.statusText().contains("you: ann ⚑ ✋"), "\(h.model.statusText())")
        h.type("A")
        _ = h.sent()
        #expect(h.presenceSent == ["HAND UP", "HAND DOWN"])

        var audience = Harness(hello: hello(control: false))
        audience.server("AUDIENCE room=guide following=2 browsing=0 hands=0")
        #expect(!audience.model.statusText().contains("browsing"), "counts are a presenter's")
    }
}

@Suite struct AudienceOverlayTests {
    @Test func membersHandsFirstPagedLikeWhoAndAHandLowered() {
        var h = Harness.presenter(columns: 60, rows: 6)
        _ = h.sent()
        h.type("a")
        #expect(h.sent() == ["WHO"])
        h.server(["OK WHO 5 next=3", "ann control=yes view=follow hand=down you=yes", "bob control=no view=browse:3 hand=down you=no",
                  "cid control=no view=follow hand=up you=no", "."])
        let screen = h.model.screen()
        #expect(screen[0].hasPrefix("Audience"))
        #expect(screen[1] == "> ✋ cid · following", "hands first")
        #expect(screen[2] == "     bob · page 3")
        #expect(screen[3] == "     ann ⚑ (you) · following")
        #expect(screen[5].hasPrefix("members 1-3 of 5 · Space more"))
        h.type("d")
        #expect(h.sent() == ["WHO"], "lowered, then the page again")
        #expect(h.presenceSent == ["HAND DOWN cid"])
        h.server("OK HAND DOWN 1")
        h.server(["OK WHO 5 next=3", "ann control=yes view=follow hand=down you=yes", "cid control=no view=follow hand=down you=no", "."])
        h.type(" ")
        #expect(h.sent() == ["WHO 3"])
        h.server(["OK WHO 5", "dee control=no view=follow hand=down you=no", "eve control=no view=follow hand=down you=no", "."])
        #expect(h.model.screen()[5].hasPrefix("members 4-5 of 5 · b back"))
        h.type("b")
        #expect(h.sent() == ["WHO"])
        h.type("q")
        #expect(h.model.overlay == nil)
    }
}

extension Harness {
    /// ann, given control of a presenter room by her token, on page 1 with its text here.
    static func presenter(columns: Int, rows: Int) -> Harness {
        var options = PagerOptions(size: TerminalSize(columns: columns, rows: rows))
        options.token = "t"
        options.name = "ann"
        var h = Harness(options)
        h.event(.connected)
        h.server(hello(page: 1, version: 0, control: false, name: "ann"))
        h.server("OK AUTH control=yes")
        h.answerTexts()
        return h
    }
}
