import Testing
import PageSyncCore

private let ms: UInt64 = 1_000_000
private func room(_ name: String, version: UInt64) -> SavedRoom {
    SavedRoom(room: name, page: .first, version: version, by: nil, doc: "d", epoch: Epoch(1))
}

@Suite struct BackoffTests {
    @Test func doublesFrom100MillisecondsTo5SecondsAndStartsAgainOnceConnected() {
        var backoff = Backoff(longestMilliseconds: 5000)
        let waits = (0..<9).map { _ in backoff.next() }
        #expect(waits == [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000])
        backoff.reset()
        let first = backoff.next()
        #expect(first == 100)
    }

    @Test func jitteredWaitsLieInTheUpperHalfOfEachWait() {
        var low = Backoff(longestMilliseconds: 2000)
        var high = Backoff(longestMilliseconds: 2000)
        let lows = (0..<6).map { _ in low.next(unitRandom: 0) }
        let highs = (0..<6).map { _ in high.next(unitRandom: 0.999_999) }
        #expect(lows == [50, 100, 200, 400, 800, 1000])
        #expect(highs == [99, 199, 399, 799, 1599, 1999])
    }
}

@Suite struct AnswerWatchdogTests {
    @Test func anOutageOnlyWhenTwoTicksSeeTheSameWaitOverdue() {
        var w = AnswerWatchdog(limitNanoseconds: 3000 * ms)
        #expect(w.tick(now: 10_000 * ms) == false, "nothing due")
        w.sent(due: 0, now: 0)
        w.sent(due: 1, now: 1000 * ms)  // a second command does not restart the wait
        #expect(w.waitingSince == 0)
        #expect(w.tick(now: 2999 * ms) == false, "not overdue yet")
        #expect(w.tick(now: 3000 * ms) == false, "overdue once: the loop reads its sockets first")
        #expect(w.tick(now: 3500 * ms) == true, "still the same wait at the next tick: an outage")
    }

    @Test func anAnswerBetweenTicksStartsTheWaitAgain() {
        var w = AnswerWatchdog(limitNanoseconds: 3000 * ms)
        w.sent(due: 0, now: 0)
        w.sent(due: 1, now: 0)
        #expect(w.tick(now: 3200 * ms) == false)
        // The daemon was held up: the first answer is read before the next tick.
        w.answered(due: 1, now: 3300 * ms)
        #expect(w.tick(now: 3700 * ms) == false, "one command still due, but its wait began at the last answer")
        w.answered(due: 0, now: 3800 * ms)
        #expect(w.waitingSince == nil)
        #expect(w.tick(now: 99_000 * ms) == false)
    }
}

@Suite struct ConnectLimitTests {
    @Test func theWaitIsMeasuredAgainThenTheSocketsGetOneMoreTurn() {
        #expect(ConnectLimit.decide(waitedNanoseconds: 1000 * ms + 1, limitMilliseconds: 3000, lastLook: false)
            == .waitMore(milliseconds: 2000), "the timer counted from a stale loop clock: wait the rest, rounded up")
        #expect(ConnectLimit.decide(waitedNanoseconds: 3000 * ms, limitMilliseconds: 3000, lastLook: false) == .lookOnceMore)
        #expect(ConnectLimit.decide(waitedNanoseconds: nil, limitMilliseconds: 3000, lastLook: false) == .lookOnceMore)
        #expect(ConnectLimit.decide(waitedNanoseconds: 9000 * ms, limitMilliseconds: 3000, lastLook: true) == .outage)
    }
}

@Suite struct RedisGroupLedgerTests {
    @Test func groupsSettleInOrderOnceAllTheirRepliesAreIn() {
        var ledger = RedisGroupLedger()
        #expect(ledger.sent(group: 1, replies: 2) == [])
        #expect(ledger.sent(group: 2, replies: 1) == [])
        #expect(ledger.replied(group: 2, ok: true) == [], "group 1 is not saved yet")
        #expect(ledger.replied(group: 1, ok: true) == [])
        #expect(ledger.replied(group: 1, ok: true) == [.settled(upTo: 1), .settled(upTo: 2)])
        #expect(ledger.isEmpty)
    }

    @Test func aGroupOfNoRoomSettlesOnceTheGroupsBeforeItHave() {
        var ledger = RedisGroupLedger()
        #expect(ledger.sent(group: 1, replies: 0) == [.settled(upTo: 1)])
        #expect(ledger.sent(group: 2, replies: 1) == [])
        #expect(ledger.sent(group: 3, replies: 0) == [])
        #expect(ledger.replied(group: 2, ok: true) == [.settled(upTo: 2), .settled(upTo: 3)])
    }

    @Test func aFailedReplyFailsItsGroupAndEveryLaterOneWhenItReachesTheFront() {
        var ledger = RedisGroupLedger()
        _ = ledger.sent(group: 4, replies: 1)
        _ = ledger.sent(group: 5, replies: 1)
        _ = ledger.sent(group: 6, replies: 1)
        #expect(ledger.replied(group: 5, ok: false) == [], "group 4 may still be saved")
        #expect(ledger.replied(group: 4, ok: true) == [.settled(upTo: 4), .failed(after: 4)])
        #expect(ledger.isEmpty && ledger.replied(group: 6, ok: true) == [], "a late reply of a failed group changes nothing")
    }

    @Test func aLostConnectionFailsEveryGroupWaiting() {
        var ledger = RedisGroupLedger()
        #expect(ledger.lost() == nil)
        _ = ledger.sent(group: 7, replies: 3)
        _ = ledger.sent(group: 8, replies: 1)
        #expect(ledger.lost() == .failed(after: 6))
        #expect(ledger.isEmpty)
    }
}

@Suite struct RedisAvailabilityTests {
    @Test func theRoomsCreatedAtStartWaitForTheFirstConnectionsThenTheRoomsAreReadAgain() {
        var a = RedisAvailability()
        #expect(a.submit(group: 1, rooms: [room("a", version: 0)]) == .held)
        #expect(a.navigationGate(waiting: 0) == .wait, "a daemon just started does not answer ERR 503")
        #expect(a.navigationGate(waiting: RedisAvailability.maxWaitingForFirstConnection) == .unavailable, "a flood does")
        a.connecting()
        #expect(a.commandConnectionReady(now: 0) == [], "the subscriber is not up yet")
        #expect(a.subscriberReady(now: 0) == [
            .stopConnectTimer,
            .submitHeld([.init(group: 1, rooms: [room("a", version: 0)])]),
            .askWaitingAgain,
        ])
        #expect(a.isAvailable && a.navigationGate(waiting: 0) == .send)
        #expect(a.submit(group: 2, rooms: []) == .send)
        #expect(a.groupSettled(0) == false)
        #expect(a.groupSettled(1) == true, "the last held group is saved: read the rooms again")
        #expect(a.groupSettled(2) == false, "once")
    }

    @Test func anOutageIsReportedOnceFailsTheGroupsAndBacksOff() {
        var a = RedisAvailability()
        _ = a.commandConnectionReady(now: 0)
        _ = a.subscriberReady(now: 0)
        #expect(a.lost(reason: "connection refused", now: 10 * ms) == [
            .reportOutage(reason: "connection refused"), .closeConnections, .failSentGroups,
            .askWaitingAgain, .reconnect(afterMilliseconds: 100),
        ])
        #expect(!a.isAvailable && a.outageSince == 10 * ms)
        #expect(a.submit(group: 3, rooms: []) == .fail)
        #expect(a.navigationGate(waiting: 0) == .unavailable, "an outage: no waiting")
        a.connecting()
        #expect(a.lost(reason: "connection refused", now: 20 * ms) == [
            .closeConnections, .failSentGroups, .askWaitingAgain, .reconnect(afterMilliseconds: 200),
        ], "logged once per outage")
        a.connecting()
        _ = a.commandConnectionReady(now: 2_000 * ms)
        #expect(a.subscriberReady(now: 2_010 * ms) == [
            .stopConnectTimer, .reportBack(afterNanoseconds: 2_000 * ms), .resync, .askWaitingAgain,
        ])
        #expect(a.reconnects == 1, "one outage ended, however many attempts it took")
        let lostAgain = a.lost(reason: "no answer within 3 s", now: 3_000 * ms)
        #expect(lostAgain.last == .reconnect(afterMilliseconds: 100), "back to the first wait once connected")
    }

    @Test func reconnectsCountEndedOutagesNotTheFirstConnections() {
        var a = RedisAvailability()
        _ = a.commandConnectionReady(now: 0)
        _ = a.subscriberReady(now: 0)
        #expect(a.reconnects == 0, "the first connections end no outage")
        for round in 1...3 {
            let t = UInt64(round) * 1_000 * ms
            _ = a.lost(reason: "connection closed", now: t)
            a.connecting()
            _ = a.commandConnectionReady(now: t + 100 * ms)
            #expect(a.reconnects == UInt64(round - 1), "the subscriber is not up yet")
            _ = a.subscriberReady(now: t + 100 * ms)
            #expect(a.reconnects == UInt64(round))
        }
        var offline = RedisAvailability()
        offline.startedOffline(now: 0)
        _ = offline.commandConnectionReady(now: 5 * ms)
        _ = offline.subscriberReady(now: 5 * ms)
        #expect(offline.reconnects == 1, "unreachable at start is an outage too")
    }

    @Test func redisUnreachableAtStartReconcilesEveryRoomOnTheFirstConnection() {
        var a = RedisAvailability()
        a.startedOffline(now: 0)
        #expect(a.submit(group: 1, rooms: [room("a", version: 0)]) == .fail, "not held: Redis is down")
        #expect(a.navigationGate(waiting: 0) == .unavailable)
        _ = a.commandConnectionReady(now: 5 * ms)
        #expect(a.subscriberReady(now: 5 * ms) == [.stopConnectTimer, .reportBack(afterNanoseconds: 5 * ms), .lateLoad])
        // Lost during the late load: the next connections load late again.
        a.lateLoadInterrupted()
        _ = a.lost(reason: "connection closed", now: 6 * ms)
        _ = a.commandConnectionReady(now: 7 * ms)
        let again = a.subscriberReady(now: 7 * ms)
        #expect(again.contains(.lateLoad))
    }

    @Test func redisLostBeforeTheFirstConnectionsFailsTheHeldGroupsAndLoadsLate() {
        var a = RedisAvailability()
        _ = a.submit(group: 1, rooms: [room("a", version: 0)])
        _ = a.submit(group: 2, rooms: [room("b", version: 0)])
        #expect(a.lost(reason: "connection refused", now: 0) == [
            .reportOutage(reason: "connection refused"), .closeConnections, .failSentGroups,
            .failHeldGroups(after: 0), .askWaitingAgain, .reconnect(afterMilliseconds: 100),
        ])
        _ = a.commandConnectionReady(now: 1 * ms)
        let ready = a.subscriberReady(now: 1 * ms)
        #expect(ready.contains(.lateLoad), "reconciled as after a start without Redis")
        #expect(a.groupSettled(2) == false, "no re-read waits for the failed groups")
    }

    @Test func afterShutdownNothingIsReportedOrRetried() {
        var a = RedisAvailability()
        a.shutdown()
        #expect(a.lost(reason: "connection closed", now: 0) == [])
        #expect(a.navigationGate(waiting: 0) == .unavailable)
        #expect(a.submit(group: 1, rooms: []) == .fail)
    }
}
