import Testing
import PageSyncCore

@Suite struct AuthLimiterTests {
    @Test func defaults() {
        let p = AuthLimiter.Policy()
        #expect(p.freeFailures == 3)
        #expect(p.baseDelayMilliseconds == 1000)
        #expect(p.maxDelayMilliseconds == 60_000)
        #expect(p.attemptsPerConnection == 3)
        #expect(p.forgetAfterMilliseconds == 600_000)
    }

    @Test func delayStartsAtOneSecondAndDoublesUpToSixty() {
        let limiter = AuthLimiter()
        #expect((1...9).map { limiter.delay(afterLockedFailures: $0) }
            == [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
        #expect(limiter.delay(afterLockedFailures: 1_000_000) == 60_000)
    }

    @Test func freeFailuresThenTheAddressIsLocked() {
        var l = AuthLimiter()
        for connection in 1...3 {
            #expect(l.admit(address: "a", connection: connection, now: 100) == .check)
            #expect(l.failed(address: "a", connection: connection, now: 100) == .init(retryAfterSeconds: 0, closeConnection: false))
        }
        #expect(l.admit(address: "a", connection: 4, now: 100) == .check)
        #expect(l.failed(address: "a", connection: 4, now: 100) == .init(retryAfterSeconds: 1, closeConnection: false))
        // Locked: any connection of that address is refused, even with the right token.
        #expect(l.admit(address: "a", connection: 5, now: 600) == .refuse(retryAfterSeconds: 1, closeConnection: false))
        #expect(l.admit(address: "b", connection: 6, now: 600) == .check, "another address is not affected")
        #expect(l.admit(address: "a", connection: 5, now: 1100) == .check, "the lock ends")
        #expect(l.failed(address: "a", connection: 5, now: 1100) == .init(retryAfterSeconds: 2, closeConnection: false))
        #expect(l.admit(address: "a", connection: 7, now: 2000) == .refuse(retryAfterSeconds: 2, closeConnection: false))
        #expect(l.admit(address: "a", connection: 7, now: 3100) == .check)
        #expect(l.failed(address: "a", connection: 7, now: 3100).retryAfterSeconds == 4)
    }

    @Test func aConnectionIsClosedAfterThreeWrongOrRefusedAttempts() {
        var l = AuthLimiter(policy: .init(freeFailures: 10))
        #expect(!l.failed(address: "a", connection: 1, now: 0).closeConnection)
        #expect(!l.failed(address: "a", connection: 1, now: 0).closeConnection)
        #expect(l.failed(address: "a", connection: 1, now: 0).closeConnection)

        var m = AuthLimiter(policy: .init(freeFailures: 0))
        #expect(!m.failed(address: "a", connection: 1, now: 0).closeConnection)
        #expect(m.admit(address: "a", connection: 1, now: 10) == .refuse(retryAfterSeconds: 1, closeConnection: false))
        #expect(m.admit(address: "a", connection: 1, now: 20) == .refuse(retryAfterSeconds: 1, closeConnection: true))
    }

    @Test func successForgetsTheAddressAndTheConnection() {
        var l = AuthLimiter(policy: .init(freeFailures: 1))
        _ = l.failed(address: "a", connection: 1, now: 0)
        _ = l.failed(address: "a", connection: 1, now: 0)
        #expect(l.admit(address: "a", connection: 1, now: 1000) == .check)
        l.succeeded(address: "a", connection: 1)
        #expect(l.trackedAddressCount == 0 && l.trackedConnectionCount == 0)
        #expect(l.failed(address: "a", connection: 1, now: 1000) == .init(retryAfterSeconds: 0, closeConnection: false))
    }

    @Test func quietAddressesAreForgotten() {
        var l = AuthLimiter(policy: .init(freeFailures: 0, forgetAfterMilliseconds: 10_000))
        _ = l.failed(address: "a", connection: 1, now: 0)
        _ = l.failed(address: "a", connection: 2, now: 1000)   // 2 s lock
        #expect(l.admit(address: "a", connection: 3, now: 2000) == .refuse(retryAfterSeconds: 1, closeConnection: false))
        l.prune(now: 5000)
        #expect(l.trackedAddressCount == 1, "not quiet long enough")
        #expect(l.failed(address: "a", connection: 3, now: 10_999).retryAfterSeconds == 4, "under 10 s since the last failure: remembered")
        l.prune(now: 30_000)
        #expect(l.trackedAddressCount == 0 && l.trackedConnectionCount == 0)
        #expect(l.failed(address: "a", connection: 4, now: 30_000).retryAfterSeconds == 1, "starts over")
    }

    @Test func theTableIsBounded() {
        var l = AuthLimiter(policy: .init(maxTrackedAddresses: 100))
        for i in 0..<1000 { _ = l.failed(address: "10.0.\(i / 256).\(i % 256)", connection: i, now: UInt64(i)) }
        #expect(l.trackedAddressCount <= 100)
        #expect(l.trackedAddressCount >= 75)
    }

    /// The goal: at most 100 wrong attempts a second from one address, however
    /// many connections it uses. Simulate 100,000 connections each trying 3 times over
    /// 100 seconds and count what gets checked.
    @Test func oneAddressGetsFewCheckedAttemptsHoweverManyConnections() {
        var l = AuthLimiter()
        var checked = 0
        var closed = 0
        for connection in 0..<100_000 {
            let now = UInt64(connection)   // one new connection each millisecond
            for _ in 0..<3 {
                switch l.admit(address: "203.0.113.9", connection: connection, now: now) {
                case .check:
                    checked += 1
                    if l.failed(address: "203.0.113.9", connection: connection, now: now).closeConnection { closed += 1 }
                case .refuse(_, let close):
                    if close { closed += 1 }
                }
            }
        }
        // 3 free, then locks of 1, 2, 4, ..., 32, 60, 60 s within 100 s.
        #expect(checked <= 10, "checked \(checked) in 100 s")
        #expect(closed == 100_000, "every connection was closed after its third attempt")
    }
}

@Suite struct AuthFailureLogTests {
    @Test func firstFailureIsLoggedAtOnceThenOneSummaryPerMinute() {
        var log = AuthFailureLog()
        #expect(log.record(address: "1.2.3.4", room: "slides", refused: false, now: 0)
            == "wrong token for room slides from 1.2.3.4; further failures from it are summed up once a minute")
        for i in 1...500 {
            #expect(log.record(address: "1.2.3.4", room: "slides", refused: i % 2 == 0, now: UInt64(i)) == nil)
        }
        #expect(log.flush(now: 59_999) == [])
        #expect(log.flush(now: 60_000)
            == ["250 more wrong token(s) and 250 refused AUTH attempt(s) from 1.2.3.4 in the last 60 s (room(s): slides)"])
        #expect(!log.isEmpty, "the next window is open, silently")
        #expect(log.record(address: "1.2.3.4", room: "talk", refused: false, now: 70_000) == nil)
        #expect(log.flush(now: 120_000)
            == ["1 more wrong token(s) and 0 refused AUTH attempt(s) from 1.2.3.4 in the last 60 s (room(s): talk)"])
        #expect(log.flush(now: 180_000) == [], "a quiet window ends without a line")
        #expect(log.isEmpty)
        #expect(log.record(address: "1.2.3.4", room: "slides", refused: false, now: 200_000) != nil, "a new burst is logged at once")
    }

    @Test func addressesAreSeparate() {
        var log = AuthFailureLog(windowMilliseconds: 1000)
        #expect(log.record(address: "b", room: "r", refused: false, now: 0) != nil)
        #expect(log.record(address: "a", room: "r", refused: true, now: 0)?.hasPrefix("AUTH attempt refused for room r from a") == true)
        _ = log.record(address: "a", room: "r", refused: false, now: 1)
        _ = log.record(address: "b", room: "r", refused: false, now: 1)
        #expect(log.flush(now: 1000).count == 2)
    }

    /// No log growth per attempt: a million attempts from one address over ten minutes
    /// make one line at first and one a minute after.
    @Test func aFloodMakesAboutALineAMinute() {
        var log = AuthFailureLog()
        var lines = 0
        for ms in stride(from: UInt64(0), to: 600_000, by: 1) {
            if log.record(address: "x", room: "r", refused: false, now: ms) != nil { lines += 1 }
            if ms % 1000 == 0 { lines += log.flush(now: ms).count }
        }
        #expect(lines == 10, "lines: \(lines)")
    }
}

@Suite struct PeerAddressTests {
    @Test(arguments: [
        ("127.0.0.1:5555", "127.0.0.1"),
        ("[::1]:5555", "::1"),
        ("[2001:db8::7]:80", "2001:db8::7"),
        ("[::ffff:10.1.2.3]:9", "10.1.2.3"),
        ("[::FFFF:10.1.2.3]:9", "10.1.2.3"),
        ("?", "?"),
        ("host", "host"),
    ])
    func host(_ peer: String, _ host: String) {
        #expect(PeerAddress.host(ofPeer: peer) == host)
    }
}
