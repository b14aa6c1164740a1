import Testing
import UV

/// InputPolling's decisions: poll or sleep, from how long input usually takes to come back.
struct InputWaitTests {
    /// With no wait on record the loop sleeps; the first wait, 30 µs, is recorded.
    @Test func theFirstWaitIsSleptThroughAndRecorded() {
        var wait = InputWait(limit: 100_000)
        #expect(wait.beforePoll(at: 1_000_000, reads: 0) == false)
        #expect(wait.waitingSince == 1_000_000)
        wait.afterPoll(at: 1_030_000, reads: 1)
        #expect(wait.waitingSince == nil)
        #expect(wait.window.usualWait == 30_000)
        #expect(wait.window.nanoseconds == 60_000)
    }

    /// After quick waits the loop polls, each poll phase of the wait, until the wait has lasted
    /// the window (twice the usual wait); then it sleeps.
    @Test func aQuickUsualWaitIsPolledForUntilTheWindowPasses() {
        var wait = InputWait(limit: 100_000)
        _ = wait.beforePoll(at: 0, reads: 0)
        wait.afterPoll(at: 30_000, reads: 1)
        #expect(wait.beforePoll(at: 100_000, reads: 1) == true)
        wait.afterPoll(at: 100_001, reads: 1)
        #expect(wait.waitingSince == 100_000, "nothing read: still waiting")
        #expect(wait.beforePoll(at: 159_999, reads: 1) == true)
        wait.afterPoll(at: 159_999, reads: 1)
        #expect(wait.beforePoll(at: 160_000, reads: 1) == false, "60 µs window over")
        wait.afterPoll(at: 400_000, reads: 2)
        #expect(wait.window.usualWait == 30_000 - 30_000 / 8 + 300_000 / 8)
    }

    /// Only a poll that read something ends a wait (and says so); one that ran timers or writes
    /// does not.
    @Test func aWaitEndsOnlyWhenSomethingIsRead() {
        var wait = InputWait(limit: 100_000)
        _ = wait.beforePoll(at: 0, reads: 5)
        #expect(wait.afterPoll(at: 10_000, reads: 5) == false)
        _ = wait.beforePoll(at: 20_000, reads: 5)
        #expect(wait.afterPoll(at: 50_000, reads: 7) == true)
        #expect(wait.window.usualWait == 50_000, "measured from the first poll phase of the wait")
    }

    /// Waits longer than the limit (clients that think between commands, an idle daemon): the
    /// loop never polls.
    @Test func slowInputIsNeverPolledFor() {
        var wait = InputWait(limit: 100_000)
        var now: UInt64 = 0
        for reads in UInt64(0)..<20 {
            #expect(wait.beforePoll(at: now, reads: reads) == false)
            now += 2_000_000
            wait.afterPoll(at: now, reads: reads + 1)
            now += 1_000
        }
    }

    /// A wait that begins while polling and input that keeps coming quickly: polling goes on
    /// from wait to wait; a long pause turns it off, and quick waits turn it back on.
    @Test func pollingFollowsTheLoad() {
        var wait = InputWait(limit: 100_000)
        var now: UInt64 = 0
        var reads: UInt64 = 0
        func exchange(gap: UInt64) -> Bool {
            let polled = wait.beforePoll(at: now, reads: reads)
            now += gap
            reads += 1
            wait.afterPoll(at: now, reads: reads)
            now += 5_000
            return polled
        }
        _ = exchange(gap: 20_000)
        #expect((0..<10).allSatisfy { _ in exchange(gap: 20_000) })
        _ = exchange(gap: 3_600_000_000_000)
        #expect(exchange(gap: 20_000) == false, "after an idle spell the loop sleeps")
        var quick = 0
        while !exchange(gap: 20_000), quick < 100 { quick += 1 }
        #expect(quick < 20, "took \(quick) quick waits to poll again")
    }

    @Test func aZeroLimitNeverPolls() {
        var wait = InputWait(limit: 0)
        _ = wait.beforePoll(at: 0, reads: 0)
        wait.afterPoll(at: 0, reads: 1)
        #expect(wait.beforePoll(at: 1, reads: 1) == false)
    }
}
