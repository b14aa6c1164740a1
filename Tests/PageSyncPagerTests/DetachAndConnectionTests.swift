import PageSyncCore
import Testing
import PageSyncPager

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

    @Test("reconnect waits double from 100 ms to 5 s, jittered into their upper half, and start over after a greeting")
    func reconnectWaitsDoubleAndStartOver() {
        var h = Harness(hello: hello(), text: ["a"], options: PagerOptions(server: "h:1"))
        func waits(_ count: Int) -> [Int] {
            (0..<count).compactMap { _ in
                h.event(.disconnected(reason: "refused")).compactMap { fx -> Int? in
                    if case .connect(let ms) = fx { ms } else { nil }
                }.first
            }
        }
        let first = waits(8)
        let bases = [100, 200, 400, 800, 1600, 3200, 5000, 5000]
        #expect(first.count == 8)
        for (wait, base) in zip(first, bases) { #expect((base / 2...base).contains(wait), "\(first)") }
        h.event(.connected)
        h.server(hello(page: 1))
        let again = waits(1)
        #expect(again.count == 1 && (50...100).contains(again[0]), "a greeting starts the waits over: \(again)")
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
