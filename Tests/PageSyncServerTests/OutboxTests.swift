import Testing
import PageSyncCore
import PageSyncServer

private func line(_ text: String) -> ByteLine { ByteLine.copying("\(text)\n".utf8) }
private func text(_ chunks: [[UInt8]]) -> String { chunks.map { String(decoding: $0, as: UTF8.self) }.joined() }
private func noRender(_: DeferredReply) -> [UInt8] { Array("RENDERED\n".utf8) }
/// A navigation's OK at `version` (page 1 of 1): `OK page=1 pages=1 version=<version>`.
private func ok(_ version: UInt64) -> NavigatedReply { NavigatedReply(page: .first, pageCount: 1, version: version) }

@Suite struct OutboxTests {
    @Test func repliesLeaveInOrderOnceTheirGroupIsSettled() {
        var o = Outbox()
        o.stage(.bytes(Array("A\n".utf8)), group: 0, backedUp: false)
        o.stage(.change(ok(1)), group: 1, backedUp: false)
        o.stage(.bytes(Array("B\n".utf8)), group: 1, backedUp: false)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "A\n", "group 1 is not saved yet")
        #expect(o.waits(settled: 0))
        #expect(text(o.take(settled: 1, backedUp: false, render: noRender)) == "OK page=1 pages=1 version=1 line=1 mark=-\nB\n")
        #expect(o.isEmpty && o.stagedBytes == 0 && !o.waits(settled: 1))
    }

    @Test func aClientThatKeepsUpGetsEveryChangeInOrder() {
        var o = Outbox()
        o.offer(line("PAGE v1"), group: 1, backedUp: false)
        o.offer(line("PAGE v2"), group: 1, backedUp: false)
        o.stage(.bytes(Array("PONG\n".utf8)), group: 1, backedUp: false)
        o.offer(line("PAGE v3"), group: 1, backedUp: false)
        #expect(text(o.take(settled: 1, backedUp: false, render: noRender)) == "PAGE v1\nPAGE v2\nPONG\nPAGE v3\n")
    }

    @Test func aBackedUpClientKeepsOnlyTheLatestState() {
        var o = Outbox()
        for v in 1...1000 { o.offer(line("PAGE v\(v)"), group: UInt64(v), backedUp: true) }
        #expect(o.stagedBytes == 0, "one slot, whatever the number of changes")
        #expect(o.take(settled: 1000, backedUp: true, render: noRender).isEmpty, "nothing leaves while backed up")
        #expect(text(o.take(settled: 1000, backedUp: false, render: noRender)) == "PAGE v1000\n")
    }

    @Test func aBurstPastTheBoundIsConflated() {
        var o = Outbox()
        let big = String(repeating: "x", count: 100)
        for v in 1...200 { o.offer(line("PAGE v\(v) \(big)"), group: 1, backedUp: false) }
        let out = text(o.take(settled: 1, backedUp: false, render: noRender))
        let count = out.split(separator: "\n").count
        #expect(count < 60, "kept events stop near \(Outbox.burstBound) bytes, got \(count)")
        #expect(out.hasSuffix("PAGE v200 \(big)\n"), "the newest always arrives")
    }

    @Test func theSlotWaitsForItsGroupAndForRepliesBeforeIt() {
        var o = Outbox()
        o.stage(.change(ok(9)), group: 2, backedUp: true)
        o.offer(line("PAGE v9"), group: 2, backedUp: true)
        #expect(o.take(settled: 1, backedUp: false, render: noRender).isEmpty)
        #expect(text(o.take(settled: 2, backedUp: false, render: noRender)) == "OK page=1 pages=1 version=9 line=1 mark=-\nPAGE v9\n")
    }

    @Test func aFailedGroupTurnsItsOKIntoTheErrorAndDropsItsEvents() {
        var o = Outbox()
        o.stage(.change(ok(1)), group: 1, backedUp: false)
        o.offer(line("PAGE v1"), group: 1, backedUp: false)
        o.stage(.change(ok(2)), group: 2, backedUp: false)  // moves PAGE v1 ahead
        o.offer(line("PAGE v2"), group: 2, backedUp: false)
        o.stage(.bytes(Array("PONG\n".utf8)), group: 2, backedUp: false)   // moves PAGE v2 ahead
        o.offer(line("PAGE v3"), group: 3, backedUp: false)
        let droppedSlot = o.fail(after: 1, errorLine: Array("ERR 507\n".utf8))
        #expect(droppedSlot)
        #expect(o.stagedBytes == o.items.reduce(0) { $0 + $1.item.byteCount }, "the error replaced the OK in the byte count")
        #expect(text(o.take(settled: 1, backedUp: false, render: noRender)) == "OK page=1 pages=1 version=1 line=1 mark=-\nPAGE v1\nERR 507\nPONG\n")
        #expect(o.isEmpty)
    }

    @Test func deferredRepliesAreRenderedWhenTheyLeave() {
        var o = Outbox()
        o.stage(.deferred(.status(room: "r", control: true, clients: 1)), group: 1, backedUp: false)
        var rendered = 0
        let chunks = o.take(settled: 1, backedUp: false) { reply in
            rendered += 1
            #expect(reply == .status(room: "r", control: true, clients: 1))
            return Array("OK room=r\n".utf8)
        }
        #expect(text(chunks) == "OK room=r\n" && rendered == 1)
    }

    @Test func aStateReplyLeavesAsRenderedWhenItsGroupIsSaved() {
        var o = Outbox()
        o.stage(.state(Array("OK room=r version=3\n".utf8), fallback: .status(room: "r", control: true, clients: 1)),
                group: 2, backedUp: false)
        #expect(o.take(settled: 1, backedUp: false, render: noRender).isEmpty, "it waits for the group of its state")
        var rendered = 0
        let chunks = o.take(settled: 2, backedUp: false) { _ in rendered += 1; return [] }
        #expect(text(chunks) == "OK room=r version=3\n" && rendered == 0, "sent as staged, not rendered again")
    }

    @Test func aStateReplyWhoseGroupFailedReportsTheSavedStateInstead() {
        var o = Outbox()
        o.stage(.state(Array("OK room=r version=1\n".utf8), fallback: .status(room: "r", control: true, clients: 1)),
                group: 1, backedUp: false)
        o.stage(.state(Array("OK room=r version=3\n".utf8), fallback: .status(room: "r", control: true, clients: 2)),
                group: 2, backedUp: false)
        _ = o.fail(after: 1, errorLine: Array("ERR 507\n".utf8))
        var asked: [DeferredReply] = []
        let chunks = o.take(settled: 1, backedUp: false) { reply in
            asked.append(reply)
            return Array("OK room=r version=2\n".utf8)
        }
        // The first reported a saved state and stands; the second's state is gone.
        #expect(text(chunks) == "OK room=r version=1\nOK room=r version=2\n")
        #expect(asked == [.status(room: "r", control: true, clients: 2)])
        #expect(o.isEmpty)
    }

    @Test func aClosingClientGetsNoEventAfterItsLastReply() {
        var o = Outbox()
        o.stage(.bytes(Array("OK BYE\n".utf8)), group: 0, backedUp: false)
        o.state = .closing
        o.offer(line("PAGE v5"), group: 0, backedUp: true)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "OK BYE\n")
    }

    @Test func readingPausesAtTheHighWaterMarkAndResumesBelowHalf() {
        var o = Outbox()
        o.stage(.bytes([UInt8](repeating: 0x61, count: 1000)), group: 5, backedUp: false)
        #expect(!o.mustPause(queued: 0, highWater: 2000))
        #expect(o.mustPause(queued: 1000, highWater: 2000))
        #expect(!o.mayResume(queued: 0, highWater: 2000), "1000 is not below half of 2000")
        #expect(o.mayResume(queued: 0, highWater: 2002))
        _ = o.take(settled: 5, backedUp: false, render: noRender)
        #expect(o.mayResume(queued: 999, highWater: 2000))
    }
}

@Suite struct OutboxStreamingTests {
    @Test func aLargeTextLeavesInPiecesAndEventsWaitForItsEnd() {
        let body = Array((0..<20_000).map { "line \($0)\n" }.joined().utf8)
        let encoder = TextReplyEncoder(page: .first, pageCount: 1, doc: "d", bytes: body, pageByteCount: body.count, truncated: false)
        var o = Outbox()
        o.stage(.text(encoder, size: body.count), group: 0, backedUp: false)
        o.offer(line("PAGE v2"), group: 0, backedUp: false)
        var pieces: [[UInt8]] = []
        while o.isStreaming {
            let taken = o.take(settled: 0, backedUp: false, render: noRender)
            #expect(taken.count == 1 || !o.isStreaming)
            pieces += taken
            #expect(pieces.count < 1000)
        }
        #expect(pieces.count > 2, "\(body.count) bytes in pieces of \(Outbox.streamChunk)")
        let all = pieces.flatMap { $0 }
        let expected = Wire.text(page: .first, pageCount: 1, doc: "d", bytes: body, pageByteCount: body.count, truncated: false) + Array("PAGE v2\n".utf8)
        #expect(all == expected, "the event comes after the whole reply, never inside it")
        #expect(o.isEmpty && o.stagedBytes == 0)
    }
}

@Suite struct OutboxClosingTests {
    @Test func aClosingClientDropsItsSlotAndIsEmptyOnceItsRepliesLeft() {
        var o = Outbox()
        o.offer(line("PAGE v1"), group: 0, backedUp: true)
        o.stage(.bytes(Array("OK BYE\n".utf8)), group: 0, backedUp: true)
        o.close(backedUp: true)
        o.offer(line("PAGE v2"), group: 0, backedUp: false)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "OK BYE\n")
        #expect(o.isEmpty, "nothing holds the connection open")
    }

    /// A client that half-closed right after its NEXT: the PAGE it was offered before the close
    /// follows its OK, as it would have on an open connection.
    @Test func aClientThatKeepsUpGetsTheStateItWasOfferedBeforeTheClose() {
        var o = Outbox()
        o.stage(.bytes(Array("OK page=2\n".utf8)), group: 1, backedUp: false)
        o.offer(line("PAGE v2"), group: 1, backedUp: false)
        o.close(backedUp: false)
        o.offer(line("PAGE v3"), group: 2, backedUp: false)
        #expect(text(o.take(settled: 0, backedUp: false, render: noRender)) == "", "both wait for their group")
        #expect(text(o.take(settled: 2, backedUp: false, render: noRender)) == "OK page=2\nPAGE v2\n")
        #expect(o.isEmpty)
    }
}
