import Testing
import PageSyncCore

@Suite struct CommandRateTests {
    private static let ms: UInt64 = 1_000_000

    /// A bucket of `burst` at 1,000 a second, emptied, with counting started at `start`.
    private static func emptied(perSecond: Int = 1000, burst: Int = 10, at start: UInt64 = 0) -> CommandRate {
        var rate = CommandRate(perSecond: perSecond, burst: burst)
        for _ in 0..<burst { rate.take() }
        rate.refill(now: start)
        return rate
    }

    @Test func startsFullAndEmptiesAfterItsBurst() {
        var rate = CommandRate(perSecond: 1000, burst: 3)
        #expect(rate.isFull && !rate.isEmpty && rate.available == 3)
        for _ in 0..<3 { rate.take() }
        #expect(rate.isEmpty && !rate.isFull)
        rate.refill(now: 5 * Self.ms)
        #expect(rate.isEmpty, "counting starts at the first refill after a take")
        #expect(rate.nanosecondsUntilNext(now: 5 * Self.ms) == Self.ms)
    }

    @Test func earnsOneCommandPerIntervalAndKeepsWhatIsNotWholeYet() {
        var rate = Self.emptied()
        rate.refill(now: Self.ms / 2)
        #expect(rate.available == 0, "half of 1 ms earns nothing whole")
        #expect(rate.nanosecondsUntilNext(now: Self.ms / 2) == Self.ms / 2)
        rate.refill(now: Self.ms + Self.ms / 2)
        #expect(rate.available == 1)
        // The half millisecond left over counts: 0.5 ms more makes a second command.
        rate.refill(now: 2 * Self.ms)
        #expect(rate.available == 2)
        // Refilled often or once, the same total: 100 refills over 7 ms.
        var often = Self.emptied()
        var once = often
        for step in 1...100 { often.refill(now: UInt64(step) * 7 * Self.ms / 100) }
        once.refill(now: 7 * Self.ms)
        #expect(often.available == 7 && once.available == 7)
    }

    @Test func neverHoldsMoreThanItsBurstHoweverLongTheQuiet() {
        var rate = Self.emptied(perSecond: 2000, burst: 4)
        rate.refill(now: 3_600_000 * Self.ms)
        #expect(rate.available == 4 && rate.isFull)
        // The hour while it was full earned nothing: emptied again, the next command is
        // an interval after the first refill, not paid for by the quiet hour.
        for _ in 0..<4 { rate.take() }
        rate.refill(now: 3_600_001 * Self.ms)
        #expect(rate.isEmpty)
        #expect(rate.nanosecondsUntilNext(now: 3_600_001 * Self.ms) == Self.ms / 2)
        rate.refill(now: 3_600_001 * Self.ms + Self.ms / 2)
        #expect(rate.available == 1)
    }

    @Test func aFullBucketRefilledDoesNotBankTheTime() {
        var rate = CommandRate(perSecond: 1000, burst: 2)
        rate.refill(now: 50 * Self.ms)
        rate.take()
        rate.take()
        rate.refill(now: 60 * Self.ms)
        #expect(rate.isEmpty, "the 10 ms from the last refill of a full bucket earned nothing")
        rate.refill(now: 61 * Self.ms)
        #expect(rate.available == 1)
    }

    @Test func aClockThatGoesBackAddsNothing() {
        var rate = Self.emptied(at: 10 * Self.ms)
        rate.refill(now: 5 * Self.ms)
        #expect(rate.isEmpty)
        #expect(rate.nanosecondsUntilNext(now: 5 * Self.ms) == 6 * Self.ms)
        #expect(rate.nanosecondsUntilNext(now: 20 * Self.ms) == 0, "overdue: at once")
        rate.refill(now: 12 * Self.ms)
        #expect(rate.available == 2)
    }

    @Test func nonsenseLimitsAreClampedToOne() {
        var rate = Self.emptied(perSecond: 0, burst: 1)
        #expect(rate.perSecond == 1 && rate.burst == 1)
        rate.refill(now: 999 * Self.ms)
        #expect(rate.isEmpty)
        rate.refill(now: 1000 * Self.ms)
        #expect(rate.available == 1)
        #expect(CommandRate(perSecond: 10, burst: -3).burst == 1)
        // A rate above a command a nanosecond still earns one per nanosecond.
        var fast = Self.emptied(perSecond: 2_000_000_000, burst: 10)
        fast.refill(now: 3)
        #expect(fast.available == 3)
    }
}
