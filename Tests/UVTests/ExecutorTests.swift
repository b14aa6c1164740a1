import Foundation
import Testing
import UV

@Suite("LoopExecutor")
struct ExecutorTests {
    @Test func actorMethodsRunOnTheLoopThread() async throws {
        try await withRunningLoop { loop in
            let actor = LoopActor(loop: loop)
            #expect(!loop.isCurrentThread)
            #expect(await actor.isOnLoopThread())
            #expect(await actor.bump() == 1)
        }
    }

    @Test func executeRunsOnTheLoopThread() async throws {
        try await withRunningLoop { loop in
            let onLoopThread = try await onLoop(loop) { loop.isCurrentThread }
            #expect(onLoopThread)
        }
    }

    @Test func assumeIsolatedWorksInsideATimerCallback() async throws {
        try await withRunningLoop { loop in
            let actor = LoopActor(loop: loop)
            let value: Int = try await awaitOnLoop(loop) { once in
                let timer = UV.Timer(loop: loop)
                timer.start(afterMilliseconds: 1) {
                    // A C callback on the loop thread: no Swift job is running here.
                    let count = actor.assumeIsolated { $0.bump() }
                    timer.close()
                    once.resume(returning: count)
                }
            }
            #expect(value == 1)
            #expect(await actor.count == 1)
        }
    }

    @Test func isolationChecksAnswerByThread() async throws {
        try await withRunningLoop { loop in
            #expect(loop.executor.isIsolatingCurrentContext() == false)
            let onLoopThread = try await onLoop(loop) { loop.executor.isIsolatingCurrentContext() }
            #expect(onLoopThread == true)
        }
    }

    @Test func checkIsolatedTrapsOffTheLoopThread() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            loop.executor.checkIsolated()
        }
    }

    @Test func manyConcurrentActorCallsAllRun() async throws {
        try await withRunningLoop { loop in
            let actor = LoopActor(loop: loop)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2_000 {
                    group.addTask { await actor.bump() }
                }
            }
            #expect(await actor.count == 2_000)
        }
    }

    @Test func enqueuedWorkRunsInFIFOOrderPerProducer() async throws {
        try await withRunningLoop { loop in
            let producers = 4
            let perProducer = 5_000
            let logs = Box([[Int]](repeating: [], count: producers))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for producer in 0..<producers {
                    group.addTask {
                        for i in 0..<perProducer {
                            loop.execute { logs.value[producer].append(i) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Everything enqueued above runs before this closure (FIFO).
            let snapshot = try await onLoop(loop) { logs.value }
            for log in snapshot {
                #expect(log == Array(0..<perProducer))
            }
        }
    }

    @Test func actorJobsAndClosuresInterleaveInEnqueueOrder() async throws {
        try await withRunningLoop { loop in
            let actor = LoopActor(loop: loop)
            // From a single producer, every execute closure runs in order.
            for i in 0..<1_000 {
                loop.execute { actor.assumeIsolated { $0.append(i) } }
            }
            let log = await actor.log
            #expect(log == Array(0..<1_000))
        }
    }
}
