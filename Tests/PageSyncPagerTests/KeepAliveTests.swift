import PageSyncCore
import Testing
import PageSyncPager

@Suite struct KeepAliveTests {
    /// The ticks from `from` to `to` (every `step` ms) at which a PING is due.
    private static func due(_ keepAlive: inout KeepAlive, from: UInt64, to: UInt64, step: UInt64 = 500) -> [UInt64] {
        stride(from: from, through: to, by: Int(step)).filter { keepAlive.tick($0) }
    }

    @Test func withoutAnIdleTimeoutNothingIsSent() {
        var k = KeepAlive(tickMilliseconds: 500)
        #expect(Self.due(&k, from: 0, to: 600_000).isEmpty, "not greeted")
        k.greeted(idleSeconds: nil)
        #expect(Self.due(&k, from: 600_500, to: 1_200_000).isEmpty)
        k.greeted(idleSeconds: 0)
        #expect(k.intervalMilliseconds == nil && Self.due(&k, from: 1_200_500, to: 1_800_000).isEmpty)
    }

    @Test func aPingAfterHalfTheTimeoutLessATickOfSilence() {
        var k = KeepAlive(tickMilliseconds: 500)
        _ = k.tick(10_000)
        k.greeted(idleSeconds: 4)
        #expect(k.intervalMilliseconds == 1_500)
        #expect(Self.due(&k, from: 10_500, to: 16_000) == [11_500, 13_000, 14_500, 16_000])
    }

    @Test func aCommandSentPutsThePingOff() {
        var k = KeepAlive(tickMilliseconds: 500)
        k.greeted(idleSeconds: 4)
        #expect(Self.due(&k, from: 500, to: 1_000).isEmpty)
        k.sent()  // at the last tick, 1,000
        #expect(Self.due(&k, from: 1_500, to: 4_000) == [2_500, 4_000])
    }

    @Test func aShortTimeoutPingsEveryTick() {
        var k = KeepAlive(tickMilliseconds: 500)
        k.greeted(idleSeconds: 1)
        #expect(k.intervalMilliseconds == 500)
        #expect(Self.due(&k, from: 500, to: 2_000) == [500, 1_000, 1_500, 2_000])
        var slow = KeepAlive(tickMilliseconds: 1_000)
        slow.greeted(idleSeconds: 2)
        #expect(slow.intervalMilliseconds == 1_000, "half of 2 s less a 1 s tick is none: every tick")
    }

    @Test func disconnectedUntilTheNextGreeting() {
        var k = KeepAlive(tickMilliseconds: 500)
        k.greeted(idleSeconds: 2)
        #expect(Self.due(&k, from: 500, to: 1_000) == [500, 1_000])
        k.disconnected()
        #expect(Self.due(&k, from: 1_500, to: 10_000).isEmpty)
        k.greeted(idleSeconds: 2)
        #expect(Self.due(&k, from: 10_500, to: 11_000) == [10_500, 11_000], "silence counts from the greeting")
    }
}

@Suite struct KeepAlivePagerTests {
    private static func tick(_ ms: UInt64) -> PagerEvent { .tick(ClockReading(monotonicMilliseconds: ms, hour: 9, minute: 0)) }

    @Test func aFollowingPagerPingsWithinTheServersIdleTimeoutAndTakesThePong() {
        var h = Harness(hello: hello() + " idle=4")
        #expect(h.model.tickMilliseconds == 500)
        h.effects = []
        for ms in stride(from: 500, through: 1_000, by: 500) { h.event(Self.tick(UInt64(ms))) }
        #expect(h.effects.isEmpty, "not silent for 1.5 s yet")
        h.event(Self.tick(1_500))
        #expect(h.effects == [.send(.ping(nil))])
        h.server("OK PONG")
        h.server(pageEvent(page: 2, version: 1))
        #expect(h.model.room?.page == 2 && h.model.message == nil, "the pong is taken as the ping's answer, and nothing else")
        h.effects = []
        h.event(Self.tick(2_000))
        h.event(Self.tick(2_500))
        #expect(!h.effects.contains(.send(.ping(nil))))
        h.event(Self.tick(3_000))
        #expect(h.effects.contains(.send(.ping(nil))))
    }

    @Test func withoutIdleInTheGreetingThePagerSendsNothing() {
        var h = Harness()
        h.effects = []
        for ms in stride(from: 500, through: 600_000, by: 500) { h.event(Self.tick(UInt64(ms))) }
        #expect(h.effects.isEmpty)
    }

    @Test func disconnectedThePagerSendsNoPing() {
        var h = Harness(hello: hello() + " idle=2")
        h.event(.disconnected(reason: "the server closed the connection"))
        h.effects = []
        for ms in stride(from: 500, through: 10_000, by: 500) { h.event(Self.tick(UInt64(ms))) }
        #expect(!h.effects.contains(.send(.ping(nil))))
    }
}
