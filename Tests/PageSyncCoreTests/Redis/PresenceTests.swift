import TestSupport
import Testing
import PageSyncCore

@Suite struct PresenceRulesTests {
    @Test func heartbeatOnTheFirstTickAndEveryTwentiethThatIsEveryFiveSeconds() {
        let beats = (1...61).filter { PresenceRules.isHeartbeat(tick: $0) }
        #expect(beats == [1, 21, 41, 61])
        #expect(!PresenceRules.isHeartbeat(tick: 0))
        #expect(!PresenceRules.isHeartbeat(tick: -4))
        #expect(PresenceRules.heartbeatMilliseconds == 5000)
    }

    @Test func aLiveDaemonNeverExpiresAndADeadOneLeavesWithinThirtySeconds() {
        // Three heartbeats may be late or lost before a live daemon's entry expires.
        #expect(PresenceRules.heartbeatMilliseconds * 3 < PresenceRules.ttlMilliseconds)
        #expect(PresenceRules.ttlMilliseconds <= 30_000)
        #expect(PresenceRules.firstTickMilliseconds <= PresenceRules.tickMilliseconds)
    }

    @Test("a change is looked at within a quarter of a second, so it is in other daemons' WHO within PROTOCOL.md's half second")
    func aChangeIsSharedWithinHalfASecond() {
        #expect(PresenceRules.tickMilliseconds <= 250)
        #expect(PresenceRules.firstTickMilliseconds <= 250)
    }

    @Test func memberAndWhoLines() {
        #expect(PresenceRules.memberLine(name: "ann", control: true) == "ann control=yes view=follow hand=down")
        #expect(PresenceRules.memberLine(name: "bob", control: false, view: .browse(PageNumber(2)!), hand: true)
                == "bob control=no view=browse:2 hand=up")
        #expect(PresenceRules.whoLine("ann control=yes", isYou: true) == "ann control=yes you=yes")
        #expect(PresenceRules.whoLine("ann control=yes", isYou: false) == "ann control=yes you=no")
    }

    @Test func whoListsThisDaemonFirstThenTheOthersNeverAsTheAsker() {
        let lines = PresenceRules.whoLines(
            local: [(line: "ann control=no", isYou: false), (line: "bob control=yes", isYou: true)],
            others: ["cy control=no", "bob control=no"])
        #expect(lines == ["ann control=no you=no", "bob control=yes you=yes", "cy control=no you=no", "bob control=no you=no"])
        #expect(PresenceRules.whoLines(local: [], others: []) == [])
        #expect(PresenceRules.whoLines(local: [(line: "ann control=no", isYou: true)], others: []) == ["ann control=no you=yes"])
        let hands = PresenceRules.whoLines(
            local: [(line: "ann control=no view=follow hand=down", isYou: false), (line: "bob control=no view=follow hand=up", isYou: false)],
            others: ["cy control=no view=follow hand=down", "dee control=no view=browse:2 hand=up"])
        #expect(hands.map { $0.split(separator: " ")[0] } == ["bob", "dee", "ann", "cy"], "raised hands first: a presenter's overlay shows them on its first page")
    }

    @Test func roomsCountsOtherDaemonsClientsPerRoom() {
        let counts = PresenceRules.otherClientCounts(rooms: ["a", "b", "c"], replies: [["x control=no", "y control=no"], [], ["z control=yes"]])
        #expect(counts == ["a": 2, "b": 0, "c": 1])
        // Redis could not be asked, or answered for other rooms: local clients only.
        #expect(PresenceRules.otherClientCounts(rooms: ["a"], replies: nil) == [:])
        #expect(PresenceRules.otherClientCounts(rooms: ["a", "b"], replies: [["x"]]) == [:])
        #expect(PresenceRules.otherClientCounts(rooms: [], replies: []) == [:])
    }
}

@Suite struct PresenceTrackerTests {
    @Test func aNewListIsSentAndAnUnchangedOneOnlyOnHeartbeats() {
        var t = PresenceTracker()
        #expect(t.due(room: "r", lines: ["ann control=no"], heartbeat: false) == ["ann control=no"])
        #expect(t.due(room: "r", lines: ["ann control=no"], heartbeat: false) == nil)
        #expect(t.due(room: "r", lines: ["ann control=no"], heartbeat: true) == ["ann control=no"])
        #expect(t.sent == ["r": ["ann control=no"]])
    }

    @Test func aChangedListIsSentAtOnce() {
        var t = PresenceTracker()
        _ = t.due(room: "r", lines: ["ann control=no"], heartbeat: true)
        #expect(t.due(room: "r", lines: ["ann control=no", "bob control=no"], heartbeat: false) == ["ann control=no", "bob control=no"])
        // Order is part of the list: a reordering is a change.
        #expect(t.due(room: "r", lines: ["bob control=no", "ann control=no"], heartbeat: false) == ["bob control=no", "ann control=no"])
    }

    @Test func anEmptiedRoomIsClearedOnceAndNeverRefreshed() {
        var t = PresenceTracker()
        _ = t.due(room: "r", lines: ["ann control=no"], heartbeat: false)
        #expect(t.due(room: "r", lines: [], heartbeat: false) == [])
        #expect(t.sent["r"] == nil)
        #expect(t.due(room: "r", lines: [], heartbeat: false) == nil)
        #expect(t.due(room: "r", lines: [], heartbeat: true) == nil)
        // A room that never had members sends nothing, heartbeat or not.
        #expect(t.due(room: "empty", lines: [], heartbeat: true) == nil)
    }

    @Test func roomsAreTrackedApart() {
        var t = PresenceTracker()
        #expect(t.due(room: "a", lines: ["ann control=no"], heartbeat: false) != nil)
        #expect(t.due(room: "b", lines: ["ann control=no"], heartbeat: false) != nil)
        #expect(t.due(room: "a", lines: ["ann control=no"], heartbeat: false) == nil)
    }

    @Test func leavingClearsEveryRoomWithMembersOnce() {
        var t = PresenceTracker()
        _ = t.due(room: "b", lines: ["x control=no"], heartbeat: false)
        _ = t.due(room: "a", lines: ["y control=no"], heartbeat: false)
        _ = t.due(room: "c", lines: ["z control=no"], heartbeat: false)
        _ = t.due(room: "c", lines: [], heartbeat: false)
        #expect(t.leaving() == ["a", "b"])
        #expect(t.leaving() == [])
        #expect(t == PresenceTracker())
    }
}

@Suite struct PresenceTrackerRevisionTests {
    @Test("a room's lines are built only when its revision moved; a still room costs nothing but its heartbeat")
    func buildsOnlyWhenTheRevisionMoved() {
        var t = PresenceTracker()
        var builds = 0
        let ann = ["ann control=no"]
        func due(_ revision: UInt64, _ lines: [String], heartbeat: Bool) -> [String]? {
            t.due(room: "r", revision: revision, heartbeat: heartbeat) { builds += 1; return lines }
        }
        #expect(due(1, ann, heartbeat: false) == ann)
        #expect(builds == 1)
        // Unchanged: no build, nothing sent; a heartbeat sends what was sent last.
        #expect(due(1, ann, heartbeat: false) == nil)
        #expect(due(1, ann, heartbeat: true) == ann)
        #expect(due(1, ann, heartbeat: false) == nil)
        #expect(builds == 1)
        // Moved: built again and sent because it differs.
        #expect(due(2, ann + ["bob control=no"], heartbeat: false) == ann + ["bob control=no"])
        #expect(builds == 2)
        // Moved with the same lines (a rename and back): built, not sent until a heartbeat.
        #expect(due(3, ann + ["bob control=no"], heartbeat: false) == nil)
        #expect(builds == 3)
        #expect(due(3, [], heartbeat: true) == ann + ["bob control=no"], "the heartbeat resends the lines last sent, without building")
        #expect(builds == 3)
        #expect(t.sent == ["r": ann + ["bob control=no"]])
    }

    @Test func aMovedRevisionOnAHeartbeatSendsTheNewLinesOnce() {
        var t = PresenceTracker()
        _ = t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] }
        #expect(t.due(room: "r", revision: 2, heartbeat: true) { ["ann control=yes"] } == ["ann control=yes"])
        #expect(t.due(room: "r", revision: 2, heartbeat: false) { Issue.record("built again"); return [] } == nil)
    }

    @Test("an emptied room is cleared once and never refreshed; a room that never had members sends nothing")
    func emptiedRoom() {
        var t = PresenceTracker()
        _ = t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] }
        #expect(t.due(room: "r", revision: 2, heartbeat: false) { [] } == [])
        #expect(t.due(room: "r", revision: 2, heartbeat: true) { [] } == nil)
        #expect(t.due(room: "empty", revision: 0, heartbeat: true) { [] } == nil)
        #expect(t.due(room: "empty", revision: 0, heartbeat: true) { Issue.record("built again"); return [] } == nil)
        #expect(t.sent.isEmpty)
    }

    @Test func roomsKeepTheirRevisionsApart() {
        var t = PresenceTracker()
        var built: [String] = []
        for room in ["a", "b"] { _ = t.due(room: room, revision: 5, heartbeat: false) { built.append(room); return ["x control=no"] } }
        _ = t.due(room: "a", revision: 5, heartbeat: false) { built.append("a"); return ["x control=no"] }
        _ = t.due(room: "b", revision: 6, heartbeat: false) { built.append("b"); return ["x control=no"] }
        #expect(built == ["a", "b", "b"])
    }

    @Test("after leaving nothing counts as built: the same revision builds and sends again")
    func leavingForgetsRevisions() {
        var t = PresenceTracker()
        _ = t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] }
        #expect(t.leaving() == ["r"])
        #expect(t == PresenceTracker())
        #expect(t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] } == ["ann control=no"])
    }

    @Test("Redis reachable, the first time or again after an outage however short: every room is sent at once, as on a heartbeat")
    func everythingIsSentAgainWhenTheEngineComesBack() {
        var t = PresenceTracker()
        /// What the tracker says to each look, in order.
        func looks(_ available: [Bool]) -> [Bool] { available.map { t.lookAtEngine(available: $0) } }
        #expect(looks([false, true, true]) == [false, true, false], "reachable the first time: send")
        #expect(t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] } == ["ann control=no"])
        // Unchanged: nothing until a heartbeat.
        #expect(t.due(room: "r", revision: 1, heartbeat: false) { ["ann control=no"] } == nil)
        // An outage of one loop turn, then reachable again (a restart that lost every entry): once.
        #expect(looks([false, true, true]) == [false, true, false], "back after an outage")
        // What the coordinator does then: a heartbeat now, which sends the unchanged lines again.
        #expect(t.due(room: "r", revision: 1, heartbeat: true) { ["ann control=no"] } == ["ann control=no"])
        // A long outage is still one send when it ends.
        #expect(looks([false, false, false, false, true, true]) == [false, false, false, false, true, false])
    }

    @Test("with revisions that move whenever the lines change, it sends exactly what building every tick would (random runs)")
    func agreesWithBuildingEveryTick() {
        var rng = SeededGenerator(seed: 42)
        let names = ["ann", "bob", "cy", "dee"]
        for _ in 0..<200 {
            var byRevision = PresenceTracker()
            var everyTick = PresenceTracker()
            var lines: [String] = []
            var revision: UInt64 = UInt64(rng.next() % 3)
            for tick in 1...60 {
                switch rng.next() % 4 {
                case 0:
                    // A change, possibly to the same lines (a rename and back in one tick).
                    revision += 1 + rng.next() % 2
                    let count = Int(rng.next() % 4)
                    lines = (0..<count).map { _ in "\(names[Int(rng.next() % 4)]) control=\(rng.next() % 2 == 0 ? "yes" : "no")" }
                default: break
                }
                let heartbeat = PresenceRules.isHeartbeat(tick: tick)
                let current = lines
                #expect(byRevision.due(room: "r", revision: revision, heartbeat: heartbeat) { current }
                        == everyTick.due(room: "r", lines: current, heartbeat: heartbeat))
                #expect(byRevision.sent == everyTick.sent)
            }
        }
    }
}

@Suite struct LateLoadTests {
    private func saved(page: Int, version: UInt64, doc: String, epoch: UInt64, by: String? = nil) -> SavedRoom {
        SavedRoom(room: "talk", page: PageNumber(page)!, version: version, by: by, doc: doc, epoch: Epoch(epoch))
    }

    @Test func aMissingRoomIsCreatedFromTheLocalState() {
        let local = saved(page: 1, version: 0, doc: "d1", epoch: 7)
        #expect(LateLoad.decide(shared: nil, local: local, pageCount: 10) == .create(local))
    }

    @Test func aSharedRoomForTheSameDocumentIsTakenAsItIs() {
        let shared = saved(page: 4, version: 12, doc: "d1", epoch: 3, by: "ann")
        #expect(LateLoad.decide(shared: shared, local: saved(page: 1, version: 0, doc: "d1", epoch: 7), pageCount: 10) == .adopt(shared))
        // The last page is still a page.
        let last = saved(page: 10, version: 2, doc: "d1", epoch: 3)
        #expect(LateLoad.decide(shared: last, local: saved(page: 1, version: 0, doc: "d1", epoch: 7), pageCount: 10) == .adopt(last))
    }

    @Test func anotherDocumentIsRecordedWithThePageClampedAndTheSharedEpochKept() {
        let shared = saved(page: 8, version: 12, doc: "other", epoch: 3, by: "ann")
        let action = LateLoad.decide(shared: shared, local: saved(page: 1, version: 0, doc: "mine", epoch: 7), pageCount: 3)
        #expect(action == .recordDocument(saved(page: 3, version: 13, doc: "mine", epoch: 3, by: "ann")))
    }

    @Test func aPageThisDocumentLacksIsClampedEvenForTheSameDocument() {
        let shared = saved(page: 9, version: 5, doc: "mine", epoch: 3)
        let action = LateLoad.decide(shared: shared, local: saved(page: 1, version: 0, doc: "mine", epoch: 7), pageCount: 4)
        #expect(action == .recordDocument(saved(page: 4, version: 6, doc: "mine", epoch: 3)))
    }
}
