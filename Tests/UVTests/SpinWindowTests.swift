import Testing
import UV

/// The adaptive spin decision: how long a waiting thread polls before it sleeps.
struct SpinWindowTests {
    @Test func withNoWaitRecordedItDoesNotPoll() {
        #expect(SpinWindow(limit: 250_000).nanoseconds == 0)
    }

    @Test func aShortUsualWaitIsPolledForTwiceOver() {
        var window = SpinWindow(limit: 250_000)
        window.record(60_000)
        #expect(window.usualWait == 60_000)
        #expect(window.nanoseconds == 120_000)
    }

    @Test func thePollNeverPassesTheLimit() {
        var window = SpinWindow(limit: 250_000)
        window.record(200_000)
        #expect(window.nanoseconds == 250_000)
        window = SpinWindow(limit: 250_000)
        window.record(250_000)
        #expect(window.nanoseconds == 250_000, "a usual wait at the limit is still polled for")
    }

    @Test func aUsualWaitBeyondTheLimitIsNotPolledFor() {
        var window = SpinWindow(limit: 250_000)
        window.record(250_001)
        #expect(window.nanoseconds == 0)
        window.record(5_000_000)
        #expect(window.nanoseconds == 0, "a slow disk: polling would only burn CPU")
    }

    @Test func eachNewWaitWeighsAnEighth() {
        var window = SpinWindow(limit: 1_000_000)
        window.record(80_000)
        window.record(160_000)
        #expect(window.usualWait == 90_000)
        window.record(0)
        #expect(window.usualWait == 78_750)
    }

    /// A burst of short waits after an idle spell starts polling again soon: a wait longer than
    /// eight limits counts as eight limits, so at most about sixteen short ones outweigh it
    /// (here two, after a short usual wait).
    @Test func anIdleSpellIsForgottenWithinAFewDozenShortWaits() {
        var window = SpinWindow(limit: 250_000)
        window.record(50_000)
        window.record(3_600_000_000_000)
        #expect(window.nanoseconds == 0)
        #expect(window.usualWait! <= 8 * 250_000)
        var waits = 0
        while window.nanoseconds == 0, waits < 100 {
            window.record(50_000)
            waits += 1
        }
        #expect(waits > 1 && waits <= 20, "took \(waits) short waits")
        #expect(window.nanoseconds <= 250_000)
    }

    /// Polling stops as the waits lengthen, without any sleep in between telling it so.
    @Test func lengtheningWaitsStopThePolling() {
        var window = SpinWindow(limit: 250_000)
        for _ in 0..<10 { window.record(40_000) }
        #expect(window.nanoseconds == 80_000)
        var waits = 0
        while window.nanoseconds > 0, waits < 100 {
            window.record(2_000_000)
            waits += 1
        }
        #expect(waits >= 1 && waits <= 3, "took \(waits) long waits")
    }

    @Test func aLimitBeyondOneSecondIsOneSecond() {
        var window = SpinWindow(limit: .max)
        #expect(window.limit == 1_000_000_000)
        window.record(.max)
        #expect(window.nanoseconds == 0)
        window = SpinWindow(limit: .max)
        window.record(400_000_000)
        #expect(window.nanoseconds == 800_000_000)
    }

    @Test func aZeroLimitNeverPolls() {
        var window = SpinWindow(limit: 0)
        window.record(0)
        #expect(window.nanoseconds == 0)
        window.record(10)
        #expect(window.nanoseconds == 0)
    }

    @Test func oneProcessorMeansNoPolling() {
        #expect(SpinWindow.onThisMachine(100_000, processors: 1) == 0)
        #expect(SpinWindow.onThisMachine(100_000, processors: 2) == 100_000)
    }
}
