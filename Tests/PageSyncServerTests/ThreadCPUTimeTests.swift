import Glibc
import Testing

import PageSyncServer

/// The turn budget's clock charges the loop's work, not time the thread spent off the CPU.
@Suite struct ThreadCPUTimeTests {
    @Test func sleepingCostsNoCPUTimeAndWorkDoes() {
        let before = ThreadCPUTime.now()
        usleep(100_000)
        let slept = ThreadCPUTime.now() - before
        #expect(slept < .milliseconds(50), "100 ms asleep charged \(slept)")
        let start = ThreadCPUTime.now()
        var x: UInt64 = 1
        var spins = 0
        while ThreadCPUTime.now() - start < .milliseconds(5) {
            x = x &* 6_364_136_223_846_793_005 &+ 1
            spins += 1
        }
        withExtendedLifetime(x) {}
        #expect(spins > 0 && ThreadCPUTime.now() - start >= .milliseconds(5))
    }

    @Test func aLazyStopwatchCountsOnlyOnceStarted() {
        var watch = LazyCPUStopwatch()
        #expect(!watch.isRunning)
        #expect(watch.elapsed() == .zero, "not started: nothing counted")
        #expect(watch.lap() == .zero, "the first lap starts it")
        #expect(watch.isRunning)
        var x: UInt64 = 1
        let start = ThreadCPUTime.now()
        while ThreadCPUTime.now() - start < .milliseconds(2) { x = x &* 6_364_136_223_846_793_005 &+ 1 }
        withExtendedLifetime(x) {}
        #expect(watch.elapsed() >= .milliseconds(2))
        watch.start()
        #expect(watch.lap() >= .milliseconds(2), "start() on a running watch keeps its start")
    }
}
