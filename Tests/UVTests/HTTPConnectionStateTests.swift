import Testing
import UV

@Suite struct HTTPConnectionStateTests {
    let limits = HTTPLimits(maxHeadBytes: 100, headTimeoutMilliseconds: 5000, idleTimeoutMilliseconds: 30_000,
                            lingerMilliseconds: 2000, maxLingerBytes: 1000, sendTimeoutMilliseconds: 10_000)

    @Test func theFirstHeadCountsFromTheConnectionsStart() {
        var state = HTTPConnectionState(limits: limits, now: 1000)
        #expect(state.deadline == 6000)
        #expect(state.expiry(now: 5999) == nil)
        #expect(state.expiry(now: 6000) == .idle, "nothing sent at all: closed quietly")
        // A head trickled in byte by byte still has to end 5 s after the connection started.
        let r1 = state.parsed(1, now: 2000)
        #expect(r1)
        let r2 = state.parsed(1, now: 5000)
        #expect(r2)
        #expect(state.deadline == 6000)
        #expect(state.expiry(now: 6000) == .headTimeout)
    }

    @Test func aHandshakeIsOverdueItsTimeoutAfterTheConnectionsStartWhateverTheHead() {
        let tls = HTTPLimits(headTimeoutMilliseconds: 5000, handshakeTimeoutMilliseconds: 1000)
        var state = HTTPConnectionState(limits: tls, now: 7000)
        #expect(state.acceptedAt == 7000)
        #expect(!state.handshakeOverdue(now: 7999))
        #expect(state.handshakeOverdue(now: 8000))
        #expect(state.expiry(now: 8000) == nil, "the head timeout alone has not run out")
        _ = state.parsed(3, now: 7500)
        #expect(state.handshakeOverdue(now: 9000), "counted from the start, not from a byte")
        #expect(HTTPLimits().handshakeTimeoutMilliseconds == 10_000)
    }

    @Test func onlyAnAnsweredConnectionWaitingWithNoByteIsIdleKeptAlive() {
        var state = HTTPConnectionState(limits: limits, now: 0)
        #expect(state.idleKeptAliveSince == nil, "never answered: a client that has yet to ask")
        _ = state.parsed(10, now: 10)
        state.headComplete(now: 20)
        #expect(state.idleKeptAliveSince == nil, "answering")
        state.responded(keepOpen: true, drained: false, now: 30)
        #expect(state.idleKeptAliveSince == nil, "the answer has not left")
        state.drained(now: 40)
        #expect(state.idleKeptAliveSince == 40)
        _ = state.parsed(1, now: 50)
        #expect(state.idleKeptAliveSince == nil, "a next head has begun")
    }

    @Test func aKeptAliveConnectionMayIdleThenHasAHeadTimeout() {
        var state = HTTPConnectionState(limits: limits, now: 0)
        _ = state.parsed(30, now: 10)
        state.headComplete(now: 10)
        state.responded(keepOpen: true, drained: true, now: 20)
        #expect(state.phase == .awaitingHead(since: 20, firstByte: nil, bytes: 0))
        #expect(state.deadline == 30_020)
        #expect(state.expiry(now: 30_020) == .idle)
        let r3 = state.parsed(5, now: 25_000)
        #expect(r3)
        #expect(state.deadline == 30_000, "from the head's first byte")
        #expect(state.expiry(now: 30_000) == .headTimeout)
    }

    @Test func theHeadAllowanceAndItsLimit() {
        var state = HTTPConnectionState(limits: limits, now: 0)
        #expect(state.headAllowance == 100)
        let r4 = state.parsed(60, now: 1)
        #expect(r4)
        #expect(state.headAllowance == 40)
        let r5 = state.parsed(40, now: 2)
        #expect(!r5, "100 bytes and still no end: too large")
        #expect(state.headAllowance == 0)
    }

    @Test func oneRequestAtATime() {
        var state = HTTPConnectionState(limits: limits, now: 0)
        state.headComplete(now: 5)
        #expect(state.headAllowance == 0, "nothing is parsed while an answer is out")
        state.responded(keepOpen: true, drained: false, now: 6)
        #expect(state.phase == .responding(since: 6))
        #expect(state.expiry(now: 10_006) == .sendTimeout, "a client that reads no answer")
        state.drained(now: 50)
        #expect(state.phase == .awaitingHead(since: 50, firstByte: nil, bytes: 0))
        #expect(state.answered == 1)
    }

    @Test func aClosingAnswerLingersThenCloses() {
        var state = HTTPConnectionState(limits: limits, now: 0)
        state.responded(keepOpen: false, drained: true, now: 100)
        #expect(state.phase == .lingering(since: 100, dropped: 0))
        let r6 = state.dropped(600)
        #expect(r6)
        let r7 = state.dropped(400)
        #expect(!r7, "1000 bytes dropped: enough")
        #expect(state.expiry(now: 2099) == nil)
        #expect(state.expiry(now: 2100) == .lingerOver)
        state.close()
        #expect(state.deadline == nil)
        #expect(state.expiry(now: .max) == nil)
    }

    @Test func whenAConnectionStaysOpen() {
        let plain = HTTPRequestHead(method: "GET", target: "/metrics")
        #expect(HTTPConnectionState.keepsOpen(after: plain, serverClosing: false))
        #expect(!HTTPConnectionState.keepsOpen(after: plain, serverClosing: true))
        var http10 = plain
        http10.version = .http10
        http10.keepAlive = false
        #expect(!HTTPConnectionState.keepsOpen(after: http10, serverClosing: false))
        var body = plain
        body.hasBody = true
        #expect(!HTTPConnectionState.keepsOpen(after: body, serverClosing: false), "a body is never read")
        var closing = plain
        closing.keepAlive = false
        #expect(!HTTPConnectionState.keepsOpen(after: closing, serverClosing: false))
    }
}
