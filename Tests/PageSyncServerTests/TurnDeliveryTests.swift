import Testing
import PageSyncCore
import PageSyncServer

/// The turn's delivery without sockets: clients write into memory (``MemoryClient``), and the
/// test settles or fails the groups the engine would.
@Suite struct TurnDeliveryTests {
    @Test func noFollowerSeesAnUnsavedPage() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a)
        h.ping(bob)  // before the change: it waits for nothing
        h.navigate(ann)
        h.endTurn()
        #expect(h.groups.map(\.id) == [1])
        #expect(h.groups[0].rooms.map(\.room) == ["a"] && h.groups[0].rooms.map(\.version) == [1])
        #expect(ann.read() == [], "the OK waits for group 1")
        #expect(bob.read() == ["OK PONG"], "bob's PONG came before the change")
        // Turns go by, the engine has not answered: nothing about version 1 leaves, also not
        // to a reply staged after the change.
        h.ping(bob)
        h.endTurn()
        h.endTurn()
        #expect(ann.read() == [] && bob.read() == [])
        #expect(a.saved.version == 0 && a.state.version == 1)
        h.settle(upTo: 1)
        #expect(a.saved.version == 1, "settled, the room reports version 1 as saved")
        h.endTurn()
        #expect(ann.read() == ["OK v1", "PAGE a v1"])
        #expect(bob.read() == ["PAGE a v1", "OK PONG"], "the PAGE before the PONG staged after it")
    }

    @Test func aFailedGroupTurnsItsRepliesIntoERR507AndNobodyIsSentItsState() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a)
        h.navigate(ann)
        h.endTurn()
        h.status(bob)  // reports version 1, which is not saved
        h.endTurn()
        #expect(ann.read() == [] && bob.read() == [])
        let undone = h.fail(after: 0)
        #expect(undone.isEmpty, "no document change was undone")
        #expect(a.state.version == 0 && a.submitted.version == 0 && a.saved.version == 0, "the room is back where it was saved")
        h.endTurn()
        #expect(bob.read() == ["STATUS v0"], "its STATUS reports the saved state instead; no PAGE")
        // ann's latest-state slot held the undone state: it is offered the room's state as it
        // stands, the saved one (a client whose slot had replaced an unsent older state needs it).
        #expect(ann.read() == ["ERR 507", "PAGE a v0"])
        // A settle that comes later releases nothing of the failed group.
        h.settle(upTo: 1)
        h.endTurn()
        #expect(ann.read() == [] && bob.read() == [])
        // The next change goes on from the saved state, in a group of its own.
        h.navigate(ann)
        h.endTurn()
        h.settle(upTo: 2)
        h.endTurn()
        #expect(ann.read() == ["OK v1", "PAGE a v1"] && bob.read() == ["PAGE a v1"])
        #expect(h.groups.map(\.id) == [1, 2])
    }

    @Test func aFailureUndoesTheTurnBeingFormedAndReportsUndoneDocumentChanges() {
        var h = DeliveryHarness()
        let a = h.room("a"), b = h.room("b")
        let ann = h.connect("ann", to: a)
        h.navigate(ann)
        h.endTurn()  // group 1: a at version 1
        h.navigate(ann)  // a at version 2, not formed yet
        let reindexed = b.room.documentChanged(pageCount: 5, doc: "e")
        #expect(reindexed)
        h.delivery.roomChanged(b)  // b re-indexed, not formed yet
        let undone = h.fail(after: 0)
        #expect(undone.map(\.name) == ["b"], "b's state names document d again")
        #expect(a.state.version == 0 && b.state.version == 0 && b.state.doc == "d")
        h.endTurn()
        #expect(h.groups.map(\.id) == [1], "nothing is left to form a group")
        #expect(ann.read() == ["ERR 507", "ERR 507", "PAGE a v0"])
        #expect(h.delivery.isSettled)
    }

    @Test func aSlowMemberIsConflatedToTheLatestState() {
        var h = DeliveryHarness()
        let a = h.room("a", pages: 20)
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a)
        bob.reading = false
        for version in 1...10 {
            h.navigate(ann)
            h.endTurn()
            h.settle(upTo: UInt64(version))
            h.endTurn()
        }
        #expect(ann.read() == (1...10).flatMap { ["OK v\($0)", "PAGE a v\($0)"] }, "ann keeps up: every change")
        #expect(bob.backedUp && bob.queued.count < 100, "one PAGE waits in bob's connection, whatever the changes")
        bob.resumeReading(&h.delivery)
        h.endTurn()
        #expect(bob.read() == ["PAGE a v1", "PAGE a v10"], "what sat in its socket, then the newest state")
        #expect(bob.writes == 2)
    }

    @Test func aFollowerThatKeepsUpGetsEachChangeInOneDirectWrite() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        let followers = (1...5).map { h.connect("f\($0)", to: a) }
        h.navigate(ann)
        h.endTurn()
        h.settle(upTo: 1)
        h.endTurn()
        for follower in followers {
            #expect(follower.read() == ["PAGE a v1"] && follower.writes == 1)
        }
        #expect(ann.read() == ["OK v1", "PAGE a v1"] && ann.writes == 1, "the OK and the PAGE in one write")
    }

    /// A follower that did not read for a while, then pinged, reads its PONG before the newest
    /// PAGE (the slot leaves after the replies staged meanwhile; see TurnDelivery's notes).
    @Test func aBackedUpClientReadsItsRepliesBeforeTheNewestState() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a)
        bob.reading = false
        for version in 1...2 {
            h.navigate(ann)
            h.endTurn()
            h.settle(upTo: UInt64(version))
            h.endTurn()
        }
        h.ping(bob)  // read while its output is backed up
        h.status(bob)
        h.endTurn()
        bob.resumeReading(&h.delivery)
        h.endTurn()
        #expect(bob.read() == ["PAGE a v1", "OK PONG", "STATUS v2", "PAGE a v2"])
        _ = ann.read()
        // Many PINGs from a client that does not read cost one PAGE, not one each.
        bob.reading = false
        for version in 3...6 {
            h.navigate(ann)
            h.endTurn()
            h.ping(bob)
            h.settle(upTo: UInt64(version))
            h.endTurn()
        }
        bob.resumeReading(&h.delivery)
        h.endTurn()
        #expect(bob.read() == ["PAGE a v3", "OK PONG", "OK PONG", "OK PONG", "OK PONG", "PAGE a v6"])
    }

    @Test func pipelinedRepliesReportTheirOwnMoment() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        // `status\nnext\nstatus\n` in one read.
        h.status(ann)
        h.navigate(ann)
        h.status(ann)
        h.endTurn()
        #expect(ann.read() == ["STATUS v0"], "the first STATUS reports the saved state: it leaves at once")
        h.settle(upTo: 1)
        h.endTurn()
        #expect(ann.read() == ["OK v1", "PAGE a v1", "STATUS v1"])

        // The same, failing: the second STATUS reports the state saved.
        h.status(ann)
        h.navigate(ann)
        h.status(ann)
        h.endTurn()
        #expect(ann.read() == ["STATUS v1"])
        h.fail(after: 1)
        h.endTurn()
        #expect(ann.read() == ["ERR 507", "STATUS v1"], "no PAGE: the undone line was queued behind the OK, not held in the latest-state slot")
    }

    @Test func aSettledGroupReleasesExactlyItsOwnOutputInOrder() {
        var h = DeliveryHarness()
        let a = h.room("a"), b = h.room("b")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a), carl = h.connect("carl", to: b)
        h.navigate(ann)  // group 1
        h.ping(bob)
        h.endTurn()
        h.navigate(ann)  // group 2
        h.ping(ann)
        h.ping(carl)  // another room's reply waits for the latest group too
        h.endTurn()
        #expect(h.groups.map(\.id) == [1, 2])
        #expect(ann.read() == [] && bob.read() == [] && carl.read() == [])
        h.settle(upTo: 1)
        h.endTurn()
        #expect(ann.read() == ["OK v1", "PAGE a v1"])
        #expect(bob.read() == ["PAGE a v1", "OK PONG"])
        #expect(carl.read() == [])
        h.settle(upTo: 1)  // again: nothing more
        h.endTurn()
        #expect(ann.read() == [] && bob.read() == [] && carl.read() == [])
        h.settle(upTo: 2)
        h.endTurn()
        #expect(ann.read() == ["OK v2", "PAGE a v2", "OK PONG"])
        #expect(bob.read() == ["PAGE a v2"])
        #expect(carl.read() == ["OK PONG"])
        #expect(a.saved.version == 2 && h.delivery.isSettled)
    }

    @Test func aTurnsChangedRoomsFormOneGroupInTheOrderTheyFirstChanged() {
        var h = DeliveryHarness()
        let a = h.room("a"), b = h.room("b")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: b)
        h.endTurn()
        #expect(h.groups.isEmpty, "no change, no group")
        h.navigate(bob)
        h.navigate(ann)
        h.navigate(bob)
        #expect(!h.delivery.isSettled)
        h.endTurn()
        #expect(h.groups.count == 1 && h.groups[0].id == 1)
        #expect(h.groups[0].rooms.map(\.room) == ["b", "a"])
        #expect(h.groups[0].rooms.map(\.version) == [2, 1], "each room once, as it stands at the turn's end")
        #expect(b.submitted.version == 2 && b.saved.version == 0)
        h.delivery.markChanged(a)  // a first record: no line, but a group
        h.endTurn()
        #expect(h.groups.map(\.id) == [1, 2])
    }

    @Test func aClosingClientGetsItsRepliesThenIsClosed() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a)
        h.navigate(ann)
        h.quit(ann)
        h.endTurn()
        #expect(h.closed.isEmpty, "its OK waits for group 1")
        h.settle(upTo: 1)
        h.endTurn()
        #expect(ann.read() == ["OK v1", "PAGE a v1", "OK BYE"])
        #expect(h.closed.map(\.name) == ["ann"] && ann.outbox.state == .closed)
        #expect(bob.read() == ["PAGE a v1"])
        h.navigate(bob)
        h.endTurn()
        h.settle(upTo: 2)
        h.endTurn()
        #expect(ann.read() == [], "nothing is written once closed")
    }

    @Test func aReplyDecidedElsewhereHoldsBackWhatFollows() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        let pending = PendingReply()
        h.delivery.stage(ann, .pending(pending))
        h.ping(ann)
        h.endTurn()
        #expect(ann.read() == [])
        pending.bytes = Wire.ok("ROOMS 0")
        h.delivery.queueFlush(ann)
        h.endTurn()
        #expect(ann.read() == ["OK ROOMS 0", "OK PONG"])
    }

    @Test func aClientThatSpentItsTurnsBudgetResumesInTheNextTurn() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        for _ in 0..<TurnBudget.commands {
            let handled = h.command(ann)
            #expect(handled)
        }
        let refused = !h.command(ann)
        #expect(refused && ann.outbox.state == .paused, "the next command waits")
        let turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["ann"] && ann.outbox.state == .open)
        let handled = h.command(ann)
        #expect(handled, "a new turn, a new budget")
    }

    @Test func theWebsMembersShareOneBudgetPerTurnAndResumeInTheOrderTheyPaused() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let (web1, web2, web3) = (h.connect("web1", to: a), h.connect("web2", to: a), h.connect("web3", to: a))
        for client in [web1, web2, web3] { client.sharesWebBudget = true }
        let ann = h.connect("ann", to: a)
        var handled = 0
        while h.command(web1) { handled += 1 }
        #expect(handled == TurnBudget.webCommands, "one web member can spend the web's whole budget")
        let web2Handled = h.command(web2)
        #expect(!web2Handled && web2.outbox.state == .paused, "then the next waits for the next turn")
        _ = h.command(web3)
        for _ in 0..<TurnBudget.commands {
            let annHandled = h.command(ann)
            #expect(annHandled, "a line-protocol member has its own budget, whatever the web does")
        }
        let turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["web1", "web2", "web3"], "in the order they paused")
        #expect(h.command(web2) && h.command(web3), "a new turn, the web's budget again")
    }

    @Test func theWebsMembersShareARateAndWaitForItInTheOrderTheyPaused() {
        var h = DeliveryHarness()
        h.delivery.webRate = CommandRate(perSecond: 1000, burst: 3)
        let ms: UInt64 = 1_000_000
        let a = h.room("a")
        let (web1, web2, web3) = (h.connect("web1", to: a), h.connect("web2", to: a), h.connect("web3", to: a))
        for client in [web1, web2, web3] { client.sharesWebBudget = true }
        let ann = h.connect("ann", to: a)
        #expect(!h.delivery.webRateNeedsRefill, "a full rate and nobody waiting: no clock to read")
        var handled = 0
        while h.command(web1) { handled += 1 }
        #expect(handled == 3, "the burst, then web1 waits")
        for client in [web2, web3] {
            let refused = !h.command(client)
            #expect(refused && client.outbox.state == .paused)
        }
        #expect(h.delivery.counts.webRateWaits == 3)
        for _ in 0..<TurnBudget.commands {
            let annHandled = h.command(ann)
            #expect(annHandled, "a line-protocol member has its own budget, whatever the web's rate")
        }
        #expect(h.delivery.webRateNeedsRefill)
        h.delivery.refillWebRate(now: 10 * ms)
        var turn = h.endTurn()
        #expect(turn.resumed.isEmpty && !turn.again, "waiting for the rate does not spin the loop")
        #expect(h.delivery.webRateWait(now: 10 * ms) == ms, "one command is earned in 1 ms")
        #expect(h.delivery.webRateWait(now: 10 * ms + ms / 4) == 3 * ms / 4)
        h.delivery.refillWebRate(now: 11 * ms)
        turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["web1"], "one command earned: the first to pause goes on")
        let web1Handled = h.command(web1)
        #expect(web1Handled, "and spends it")
        let web1Refused = !h.command(web1)
        #expect(web1Refused, "then waits again, after the others")
        h.delivery.refillWebRate(now: 13 * ms)
        turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["web2", "web3"], "two earned: the next two in turn")
        #expect(h.delivery.webRateWait(now: 13 * ms) == 0, "web1 still waits, and a command may go")
        #expect(h.command(web2) && h.command(web3))
        h.delivery.refillWebRate(now: 20 * ms)
        turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["web1"])
        #expect(h.delivery.webRateWait(now: 20 * ms) == nil, "nobody waits")
    }

    @Test func aWebMemberClosedWhileWaitingForTheRateTakesNoTurn() {
        var h = DeliveryHarness()
        h.delivery.webRate = CommandRate(perSecond: 1000, burst: 1)
        let ms: UInt64 = 1_000_000
        let a = h.room("a")
        let (web1, web2) = (h.connect("web1", to: a), h.connect("web2", to: a))
        for client in [web1, web2] { client.sharesWebBudget = true }
        let handled = h.command(web1)
        #expect(handled)
        _ = h.command(web1)
        _ = h.command(web2)
        h.delivery.forget(web1)
        h.delivery.refillWebRate(now: 0)
        h.delivery.refillWebRate(now: ms)
        let turn = h.endTurn()
        #expect(turn.resumed.map(\.name) == ["web2"], "the earned command goes to the one still there")
        #expect(h.delivery.webRateWait(now: ms) == nil)
    }

    @Test func aClientWhoseOutputBacksUpPausesUntilItDrains() {
        var h = DeliveryHarness()
        h.delivery.outputHighWater = 64
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        ann.reading = false
        var answered = 0
        while h.command(ann) {
            h.delivery.stage(ann, .bytes(Wire.ok("PONG")))
            h.endTurn()
            answered += 1
        }
        #expect(answered == 8 && ann.queuedOutputMemory >= 64, "8 PONGs of 8 bytes fill 64")
        #expect(ann.outbox.state == .paused)
        #expect(h.endTurn().resumed.isEmpty, "paused for output: it does not resume while that waits")
        ann.resumeReading(&h.delivery)
        #expect(h.endTurn().resumed.map(\.name) == ["ann"])
        #expect(ann.read().count == 8)
    }

    @Test func aClientForgottenWhileItWaitsIsSkipped() {
        var h = DeliveryHarness()
        let a = h.room("a")
        let ann = h.connect("ann", to: a)
        h.navigate(ann)
        h.endTurn()
        #expect(ann.waitQueued, "its OK waits for group 1")
        h.delivery.forget(ann)
        #expect(!ann.waitQueued)
        h.settle(upTo: 1)
        h.endTurn()
        #expect(ann.read() == [] && h.closed.isEmpty)
    }

    @Test func itCountsEachStateAddressedToEachMemberAndTheGroupsItUndoes() {
        var h = DeliveryHarness()
        let a = h.room("a"), b = h.room("b")
        let ann = h.connect("ann", to: a), bob = h.connect("bob", to: a), cy = h.connect("cy", to: b)
        h.navigate(ann)
        h.endTurn()
        #expect(h.delivery.counts == DeliveryCounts(), "nothing is delivered before its group is settled")
        h.settle(upTo: 1)
        h.endTurn()
        #expect(h.delivery.counts.deliveries == 2, "one PAGE for each of a's two members")
        h.navigate(ann)
        h.navigate(bob)  // two states of a in one turn, for each of its two members
        h.navigate(cy)
        h.endTurn()
        h.settle(upTo: 2)
        h.endTurn()
        #expect(h.delivery.counts.deliveries == 2 + 4 + 1)
        h.navigate(ann)
        h.endTurn()  // group 3
        h.navigate(cy)
        h.endTurn()  // group 4
        h.fail(after: 2)
        h.endTurn()
        #expect(h.delivery.counts.groupsFailed == 2)
        #expect(h.delivery.counts.deliveries == 7, "an undone state is delivered to nobody")
        h.settle(upTo: 2)
        h.fail(after: 2)
        #expect(h.delivery.counts.groupsFailed == 2, "a failure with nothing pending undoes no group")
        #expect([ann, bob, cy].allSatisfy { !$0.read().isEmpty })
    }
}
