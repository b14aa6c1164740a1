import Testing
import PageSyncCore
import PageSyncServer

private func line(_ text: String) -> ByteLine { ByteLine.copying("\(text)\n".utf8) }
private func text(_ chunks: [[UInt8]]) -> String { chunks.map { String(decoding: $0, as: UTF8.self) }.joined() }
private func noRender(_: DeferredReply) -> [UInt8] { Array("RENDERED\n".utf8) }

/// Replies decided by another process (the Redis engine) keep their place.
@Suite struct PendingReplyTests {
    @Test func aPendingReplyHoldsBackWhatFollowsUntilFilled() {
        var o = Outbox()
        let pending = PendingReply()
        o.stage(.bytes(Array("A\n".utf8)), group: 0, backedUp: false)
        o.stage(.pending(pending), group: 0, backedUp: false)
        o.stage(.bytes(Array("PONG\n".utf8)), group: 0, backedUp: false)
        #expect(o.hasUnfilledReply)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "A\n")
        pending.bytes = Array("OK page=2 pages=3 version=8\n".utf8)
        #expect(!o.hasUnfilledReply)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "OK page=2 pages=3 version=8\nPONG\n")
        #expect(o.isEmpty && o.stagedBytes == 0)
    }

    @Test func statesArrivingWhileAReplyWaitsAreConflatedSoVersionsNeverGoBack() {
        // Another daemon's v7 arrives before this client's own v8 is answered: the client must
        // not read OK v8 and then PAGE v7.
        var o = Outbox()
        let pending = PendingReply()
        o.stage(.pending(pending), group: 0, backedUp: false)
        o.offer(line("PAGE v7"), group: 0, backedUp: false)
        o.offer(line("PAGE v8"), group: 0, backedUp: false)
        #expect(o.take(settled: 0, backedUp: false, render: noRender).isEmpty)
        pending.bytes = Array("OK version=8\n".utf8)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "OK version=8\nPAGE v8\n")
    }

    @Test func inputWaitsWhileThePendingLimitOfRepliesWaitsForAnswers() {
        var o = Outbox()
        var replies: [PendingReply] = []
        for i in 0..<Outbox.pendingLimit {
            #expect(!o.mustPause(queued: 0, highWater: 1 << 20), "after \(i) pending replies")
            let p = PendingReply()
            replies.append(p)
            o.stage(.pending(p), group: 0, backedUp: false)
        }
        #expect(o.pendingCount == Outbox.pendingLimit)
        #expect(o.mustPause(queued: 0, highWater: 1 << 20), "the limit reached: input waits")
        #expect(!o.mayResume(queued: 0, highWater: 1 << 20))
        // Answered in order; each leaves when taken. Reading resumes below half the limit.
        for (i, p) in replies.enumerated() {
            p.bytes = Array("OK ROOMS \(i)\n".utf8)
            _ = o.take(settled: 0, backedUp: false, render: noRender)
            let waiting = Outbox.pendingLimit - i - 1
            #expect(o.pendingCount == waiting)
            #expect(o.mayResume(queued: 0, highWater: 1 << 20) == (waiting < Outbox.pendingLimit / 2), "\(waiting) waiting")
        }
        // An unfilled reply is not taken: it still counts, and so does one filled behind it.
        let first = PendingReply(), second = PendingReply()
        o.stage(.pending(first), group: 0, backedUp: false)
        o.stage(.pending(second), group: 0, backedUp: false)
        second.bytes = Array("OK\n".utf8)
        #expect(o.take(settled: 0, backedUp: false, render: noRender).isEmpty)
        #expect(o.pendingCount == 2)
        first.bytes = Array("OK\n".utf8)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "OK\nOK\n")
        #expect(o.pendingCount == 0 && o.isEmpty)
        // The byte limit still applies on its own.
        #expect(o.mustPause(queued: 1 << 20, highWater: 1 << 20))
    }

    @Test func withoutAPendingReplyEveryStateStillLeaves() {
        var o = Outbox()
        o.offer(line("PAGE v7"), group: 0, backedUp: false)
        o.offer(line("PAGE v8"), group: 0, backedUp: false)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "PAGE v7\nPAGE v8\n")
    }

    @Test func anEmptyAnswerLeavesNothing() {
        var o = Outbox()
        let pending = PendingReply()
        o.stage(.pending(pending), group: 0, backedUp: false)
        pending.bytes = []
        #expect(o.take(settled: 0, backedUp: false, render: noRender).isEmpty)
        #expect(o.isEmpty)
    }
}
