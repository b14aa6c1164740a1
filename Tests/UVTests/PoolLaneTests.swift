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
