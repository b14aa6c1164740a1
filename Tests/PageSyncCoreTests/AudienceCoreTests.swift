import Testing
import PageSyncCore

@Suite struct AudienceCoreTests {
    @Test func parsing() {
        #expect(CommandParser.parse(Array("VIEW FOLLOW".utf8)) == .success(.view(.follow)))
        #expect(CommandParser.parse(Array("view browse 3".utf8)) == .success(.view(.browse(PageNumber(3)!))))
        #expect(CommandParser.parse(Array("HAND UP".utf8)) == .success(.hand(.up)))
        #expect(CommandParser.parse(Array("HAND DOWN".utf8)) == .success(.hand(.down)))
        #expect(CommandParser.parse(Array("HAND DOWN ann".utf8)) == .success(.hand(.downFor("ann"))))
        #expect(CommandParser.parse(Array("HAND down all".utf8)) == .success(.hand(.downAll)))
        for bad in ["VIEW", "VIEW BROWSE", "VIEW BROWSE 0", "VIEW BROWSE x", "VIEW FOLLOW 2", "VIEW UP", "HAND", "HAND SIDEWAYS",
                    "HAND UP now", "HAND DOWN a b", "HAND DOWN é€"] {
            guard case .failure(let e) = CommandParser.parse(Array(bad.utf8)) else { Issue.record("\(bad) parsed"); continue }
            #expect(e.code == .malformed, "\(bad): \(e.message)")
        }
        for command in [Command.view(.follow), .view(.browse(PageNumber(7)!)), .hand(.up), .hand(.down), .hand(.downFor("bob")), .hand(.downAll)] {
            #expect(CommandParser.parse(Array(CommandEncoder.line(command).utf8)) == .success(command))
        }
    }

    @Test func counts() {
        var c = AudienceCounts()
        c.count(.follow, hand: false)
        c.count(.browse(PageNumber(2)!), hand: true)
        #expect(c.following == 1 && c.browsing == 1 && c.hands == 1)
        c.moved(from: .browse(PageNumber(2)!), to: .follow)
        c.hand(false)
        #expect(c.following == 2 && c.browsing == 0 && c.hands == 0)
        c.count(.follow, hand: false, sign: -1)
        #expect(c.following == 1)
    }

    @Test func otherDaemonsLines() {
        let lines = ["ann control=yes view=follow hand=down", "bob control=no view=browse:3 hand=up", "cid control=no view=follow hand=up",
                     "old control=no"]
        let counts = AudienceCounts.counting(presenceLines: lines)
        #expect(counts.following == 2 && counts.browsing == 1 && counts.hands == 2, "ann presents; an older daemon's line follows")
        var local = AudienceCounts()
        local.count(.follow, hand: false)
        let sum = local + counts
        #expect(sum.following == 3 && sum.browsing == 1 && sum.hands == 2)
    }

    @Test func coalescing() {
        var c = AudienceCoalescer()
        #expect(c.changed(now: 1000) == .send, "after a quiet spell: at once")
        #expect(c.changed(now: 1100) == .sendAt(1250))
        #expect(c.changed(now: 1200) == .wait, "the event due carries it")
        let early = c.fire(now: 1249), onTime = c.fire(now: 1250)
        #expect(!early && onTime)
        #expect(c.nextDue == nil)
        #expect(c.changed(now: 1300) == .sendAt(1500))
        let late = c.fire(now: 1510)
        #expect(late)
        #expect(c.changed(now: 2000) == .send)
        // A steady flood: one event per interval.
        var sent = 0
        var d = AudienceCoalescer()
        var due: UInt64?
        for now in stride(from: UInt64(0), to: 10_000, by: 1) {
            if let at = due, now >= at, d.fire(now: now) { sent += 1; due = nil }
            switch d.changed(now: now) {
            case .send: sent += 1
            case .sendAt(let at): due = at
            case .wait: break
            }
        }
        #expect(sent <= 41 && sent >= 39, "10 s of changes every millisecond: \(sent) events")
        #expect(Wire.audience(room: "r", AudienceCounts(), firstHand: nil) == Array("AUDIENCE room=r following=0 browsing=0 hands=0\n".utf8))
    }
}
