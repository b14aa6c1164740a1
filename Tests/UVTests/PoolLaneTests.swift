import Foundation
import Synchronization
import Testing
import UV

#if os(Linux)
private let isLinux = true
#else
private let isLinux = false
#endif

/// A lost completion would hang `awaitOnLoop`: the time limit turns that into a failure.
@Suite(.enabled(if: isLinux, "PoolLane needs eventfd (Linux)"), .timeLimit(.minutes(1)))
struct PoolLaneTests {
    /// Jobs run in the order submitted, never on the loop thread, and each completes once, in
    /// order, on the loop thread.
    @Test func jobsRunInOrderOffTheLoopAndCompleteInOrderOnIt() async throws {
        let ran = Mutex<[Int]>([])
        let ranOnLoop = Mutex(false)
        let completed = try await withRunningLoop { loop in
            try await awaitOnLoop(loop) { (once: Once<[Int]>) in
                guard let lane = PoolLane(loop: loop) else { throw TestFailure("no lane") }
                let completed = Box<[Int]>([])
                for index in 0..<500 {
                    lane.submit({ () -> Int in
                        if loop.isCurrentThread { ranOnLoop.withLock { $0 = true } }
                        ran.withLock { $0.append(index) }
                        return index
                    }) { value in
                        if !loop.isCurrentThread { once.resume(throwing: TestFailure("completion off the loop thread")) }
                        completed.value.append(value)
                        if completed.value.count == 500 { once.resume(returning: completed.value) }
                    }
                }
            }
        }
        #expect(completed == Array(0..<500))
        #expect(ran.withLock { $0 } == Array(0..<500))
        #expect(!ranOnLoop.withLock { $0 })
    }

    /// Once no job comes for the linger time, the pool job ends and its thread goes back to
    /// libuv's pool (which every loop of the process shares): the loop has no request in flight.
    /// A job submitted after that starts a new pool job and completes.
    @Test func anIdleLaneGivesItsPoolThreadBackAndStartsAgain() async throws {
        try await withRunningLoop { loop in
            let lane = Box<PoolLane?>(nil)
            // 1 s of linger: the eventfd's wake-up comes long before the pool job can end, even
            // in a loaded suite, so the completion sees it in flight.
            let inFlight = try await awaitOnLoop(loop) { (once: Once<Int>) in
                lane.value = PoolLane(loop: loop, lingerNanoseconds: 1_000_000_000)
                guard let lane = lane.value else { throw TestFailure("no lane") }
                let completions = Box(0)
                for _ in 0..<3 {
                    lane.submit({ usleep(1_000) }) {
                        completions.value += 1
                        if completions.value == 3 { once.resume(returning: loop.activeRequestCount) }
                    }
                }
            }
            #expect(inFlight == 1, "the lane's pool job, lingering")
            #expect(try await requestsEnd(on: loop), "the lane's pool job did not end")
            let again = try await awaitOnLoop(loop) { (once: Once<String>) in
                lane.value?.submit({ "again" }) { once.resume(returning: $0) }
            }
            #expect(again == "again")
        }
    }

    /// Closing the lane (as the loop's teardown does) while a job runs ends a pool job that would
    /// otherwise linger for ten minutes, and the job still completes; a job submitted after the
    /// close completes through `queueWork`.
    @Test func closingWithAJobInFlightStillCompletesIt() async throws {
        try await withRunningLoop { loop in
            let completed = try await awaitOnLoop(loop) { (once: Once<[String]>) in
                guard let lane = PoolLane(loop: loop, lingerNanoseconds: 600_000_000_000) else { throw TestFailure("no lane") }
                let completed = Box<[String]>([])
                let record = { (value: String) in
                    completed.value.append(value)
                    if completed.value.count == 2 { once.resume(returning: completed.value) }
                }
                lane.submit({ usleep(50_000); return "in flight" }, completion: record)
                lane.close()
                lane.submit({ "after close" }, completion: record)
            }
            #expect(Set(completed) == ["in flight", "after close"])
            #expect(try await requestsEnd(on: loop), "the closed lane's pool job did not end")
        }
    }

    /// Closing a lane whose pool job waits for work (for ten minutes) ends that pool job.
    @Test func closingAnIdleLaneEndsItsPoolJob() async throws {
        try await withRunningLoop { loop in
            let lane = Box<PoolLane?>(nil)
            let inFlight = try await awaitOnLoop(loop) { (once: Once<Int>) in
                lane.value = PoolLane(loop: loop, lingerNanoseconds: 600_000_000_000)
                guard let lane = lane.value else { throw TestFailure("no lane") }
                lane.submit({ 1 }) { _ in once.resume(returning: loop.activeRequestCount) }
            }
            #expect(inFlight == 1, "the lane's pool job, waiting for work")
            try await onLoop(loop) { lane.value?.close() }
            #expect(try await requestsEnd(on: loop), "the closed lane's pool job did not end")
        }
    }

    /// After quick jobs, the loop polls for the next job's end instead of sleeping, but only for
    /// a window (twice the quick jobs' usual time, at most the limit, here 500 ms) and only while
    /// a job is in flight: a job held on a semaphore stays in flight until the checks are done.
    @Test func theLoopPollsForAQuickJobOnlyWithinItsWindow() async throws {
        try await withRunningLoop { loop in
            let lane = Box<PoolLane?>(nil)
            try await awaitOnLoop(loop) { (once: Once<Void>) in
                lane.value = PoolLane(loop: loop, spinLimitNanoseconds: 500_000_000)
                guard let lane = lane.value else { throw TestFailure("no lane") }
                let completions = Box(0)
                for _ in 0..<20 {
                    lane.submit({ 0 }) { _ in
                        completions.value += 1
                        if completions.value == 20 { once.resume(returning: ()) }
                    }
                }
            }
            #expect(try await onLoop(loop) { lane.value?.isPolling } == false, "no job in flight")
            let gate = DispatchSemaphore(value: 0)
            let held = Mutex(true)
            let pollingAtSubmit = try await onLoop(loop) { () -> Bool? in
                lane.value?.submit({ gate.wait() }) { held.withLock { $0 = false } }
                return lane.value?.isPolling
            }
            #expect(pollingAtSubmit == true, "quick jobs so far: the loop polls for this one")
            var stillPolling = true
            for _ in 0..<500 where stillPolling {
                try await Task.sleep(for: .milliseconds(10))
                stillPolling = try await onLoop(loop) { lane.value?.isPolling } ?? false
            }
            #expect(!stillPolling, "the window passed: the loop sleeps until the job ends")
            #expect(held.withLock { $0 }, "the held job is still in flight")
            gate.signal()
            try await onLoop(loop) { lane.value?.close() }
            #expect(try await requestsEnd(on: loop), "the closed lane's pool job did not end")
            #expect(!held.withLock { $0 }, "the held job completed")
        }
    }

    /// Jobs that take longer than the spin limit are not polled for.
    @Test func theLoopDoesNotPollForSlowJobs() async throws {
        try await withRunningLoop { loop in
            let polled = try await awaitOnLoop(loop) { (once: Once<[Bool]>) in
                guard let lane = PoolLane(loop: loop, spinLimitNanoseconds: 1_000_000) else { throw TestFailure("no lane") }
                let polled = Box<[Bool]>([])
                func next() {
                    guard polled.value.count < 4 else {
                        lane.close()
                        return once.resume(returning: polled.value)
                    }
                    lane.submit({ usleep(5_000) }) { next() }
                    polled.value.append(lane.isPolling)
                }
                next()
            }
            #expect(polled == [false, false, false, false], "each job takes 5 ms, over the 1 ms limit")
        }
    }

    /// A lane whose pool thread polls for the next job (quick jobs, long limit) finds jobs while
    /// it polls, still runs every job in order, and closing it ends its pool job (the close
    /// ends a poll at once).
    @Test func aPollingPoolThreadRunsEveryJobAndEndsOnClose() async throws {
        try await withRunningLoop { loop in
            let (completed, caught) = try await awaitOnLoop(loop) { (once: Once<([Int], Int)>) in
                guard let lane = PoolLane(loop: loop, spinLimitNanoseconds: 500_000_000) else { throw TestFailure("no lane") }
                let completed = Box<[Int]>([])
                func submit(_ index: Int) {
                    lane.submit({ index }) { value in
                        completed.value.append(value)
                        guard value < 199 else {
                            let caught = lane.jobsCaughtPolling
                            lane.close()
                            return once.resume(returning: (completed.value, caught))
                        }
                        submit(value + 1)
                    }
                }
                submit(0)
            }
            #expect(completed == Array(0..<200))
            #expect(caught > 0, "each next job came a loop turn after the last: the pool thread polled for it")
            #expect(try await requestsEnd(on: loop), "the closed lane's pool job did not end")
        }
    }

    /// Whether the loop's requests in flight reach 0 within 10 s (a guard against hanging, not
    /// a timing assertion).
    private func requestsEnd(on loop: EventLoop) async throws -> Bool {
        for _ in 0..<1_000 {
            if try await onLoop(loop, { loop.activeRequestCount }) == 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
