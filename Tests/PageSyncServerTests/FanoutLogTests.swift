import Testing
import PageSyncCore
import PageSyncServer

private func line(_ text: String) -> ByteLine { ByteLine.copying("\(text)\n".utf8) }
private func texts(_ lines: ArraySlice<(line: ByteLine, group: UInt64)>) -> [String] {
    lines.map { String(decoding: $0.line.bytes, as: UTF8.self) }
}

@Suite struct FanoutLogTests {
    @Test func aMemberIsOfferedOnlyWhatItHasNotSeen() {
        var log = FanoutLog()
        let joinedBefore = log.end
        log.append(line("PAGE v1"), group: 1)
        let joinedBetween = log.end
        log.append(line("PAGE v2"), group: 1)
        #expect(texts(log.unseen(from: joinedBefore)) == ["PAGE v1\n", "PAGE v2\n"])
        #expect(texts(log.unseen(from: joinedBetween)) == ["PAGE v2\n"], "a member that came after v1 never gets it")
        #expect(log.unseen(from: log.end).isEmpty)
    }

    @Test func aCursorFromAnEarlierRunHasSeenAllOfIt() {
        var log = FanoutLog()
        log.append(line("PAGE v1"), group: 1)
        log.append(line("PAGE v2"), group: 1)
        let caughtUp = log.end
        log.reset()
        #expect(log.isEmpty && log.run == 1)
        log.append(line("PAGE v3"), group: 2)
        #expect(texts(log.unseen(from: caughtUp)) == ["PAGE v3\n"],
                "offered 2 lines in run 0: in run 1 everything is new to it, even though 2 > 1 line")
        let stale = FanoutLog.Cursor(run: 0, offered: 0)
        #expect(texts(log.unseen(from: stale)) == ["PAGE v3\n"])
    }

    @Test func hasUnseenAgreesWithUnseen() {
        var log = FanoutLog()
        let cursors = [log.end, FanoutLog.Cursor(run: 0, offered: 5)]
        log.append(line("PAGE v1"), group: 1)
        let afterOne = log.end
        log.append(line("PAGE v2"), group: 1)
        let afterTwo = log.end
        log.reset()
        log.append(line("PAGE v3"), group: 2)
        for cursor in cursors + [afterOne, afterTwo, log.end, FanoutLog.Cursor(run: 1, offered: 0), FanoutLog.Cursor(run: 7, offered: 1)] {
            #expect(log.hasUnseen(from: cursor) == !log.unseen(from: cursor).isEmpty, "\(cursor)")
        }
        #expect(!log.hasUnseen(from: log.end))
        #expect(log.hasUnseen(from: afterTwo), "a cursor from the previous run has not seen this run's line")
    }

    @Test func theLogIsSettledWhenItsNewestGroupIs() {
        var log = FanoutLog()
        #expect(log.isSettled(0), "an empty log waits for nothing")
        log.append(line("PAGE v1"), group: 3)
        log.append(line("PAGE shared"), group: 0)  // a state another daemon decided: nothing to save
        #expect(log.newestGroup == 3)
        #expect(!log.isSettled(2))
        #expect(log.isSettled(3))
        log.reset()
        #expect(log.newestGroup == 0 && log.isSettled(0))
    }
}

@Suite struct OutboxFastPathTests {
    @Test func theSlotAloneLeavesWithoutTake() {
        var o = Outbox()
        o.offer(line("PAGE v1"), group: 2, backedUp: false)
        #expect(o.takeLatestAlone(settled: 1, backedUp: false) == nil, "its group is not settled")
        #expect(o.takeLatestAlone(settled: 2, backedUp: true) == nil, "the client is backed up")
        let taken = o.takeLatestAlone(settled: 2, backedUp: false)
        #expect(taken.map { String(decoding: $0.bytes, as: UTF8.self) } == "PAGE v1\n")
        #expect(o.isEmpty)
    }

    @Test func anythingBeforeTheSlotSendsItThroughTake() {
        var o = Outbox()
        o.stage(.change(NavigatedReply(page: PageNumber(2)!, pageCount: 2, version: 2)), group: 1, backedUp: false)
        o.offer(line("PAGE v2"), group: 1, backedUp: false)
        #expect(o.takeLatestAlone(settled: 1, backedUp: false) == nil, "the OK goes first")
        #expect(!o.isEmpty)
        let out = o.take(settled: 1, backedUp: false) { _ in [] }.map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(out == "OK page=2 pages=2 version=2 line=1 mark=-\nPAGE v2\n")
    }

    @Test func onlyAnEmptyOpenOutboxTakesALineDirectly() {
        #expect(Outbox().takesLineDirectly, "nothing waits: the line may go straight to the socket")
        var slot = Outbox()
        slot.offer(line("PAGE v1"), group: 0, backedUp: true)
        #expect(!slot.takesLineDirectly, "an older state waits in the slot: it is replaced, not overtaken")
        var reply = Outbox()
        reply.stage(.bytes(Array("PONG\n".utf8)), group: 0, backedUp: false)
        #expect(!reply.takesLineDirectly, "a reply staged before the change leaves first")
        for state in [Outbox.State.paused, .draining, .closing, .closed] {
            var o = Outbox()
            o.state = state
            #expect(!o.takesLineDirectly, "\(state): the general path decides")
        }
        var drained = Outbox()
        drained.offer(line("PAGE v1"), group: 0, backedUp: false)
        _ = drained.takeLatestAlone(settled: 0, backedUp: false)
        #expect(drained.takesLineDirectly, "once everything left, the next line may go directly again")
    }

    @Test func aPausedOrClosingClientGoesThroughTake() {
        var paused = Outbox()
        paused.offer(line("PAGE v1"), group: 0, backedUp: false)
        paused.state = .paused
        #expect(paused.takeLatestAlone(settled: 0, backedUp: false) == nil, "flush decides whether it reads again")
        var closing = Outbox()
        closing.offer(line("PAGE v1"), group: 0, backedUp: false)
        closing.state = .closing
        #expect(closing.takeLatestAlone(settled: 0, backedUp: false) == nil)
    }
}
