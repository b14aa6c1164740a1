import Synchronization
import Testing
import UV

#if canImport(Glibc)
import Glibc
#endif

/// An actor that lives on a libuv loop.
private actor OnLoop {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
    init(loop: EventLoop) { self.loop = loop }
    func isOnLoopThread() -> Bool { loop.isCurrentThread }
}

@Suite struct LoopSmokeTests {
    /// The loop runs on a thread of its own; an actor on its executor runs there,
    /// a timer fires there, and closing everything frees every handle.
    @Test func anActorAndATimerRunOnTheLoopThreadAndNothingLeaks() async throws {
        let loop = try EventLoop()
        let fired = Mutex(false)
        let done = Mutex(false)
        let thread = TestThread {
            loop.run()
            loop.closeAllHandlesAndDrain()
            done.withLock { $0 = true }
        }
        thread.start()
        let actor = OnLoop(loop: loop)
        #expect(await actor.isOnLoopThread())
        loop.execute {
            let timer = Timer(loop: loop)
            timer.start(afterMilliseconds: 1) {
                fired.withLock { $0 = loop.isCurrentThread }
                timer.close()
                loop.stop()
            }
        }
        // A guard against hanging, not a timing assertion.
        for _ in 0..<500 where !done.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(done.withLock { $0 })
        #expect(fired.withLock { $0 })
        // Per-loop count: the process-wide UVHandles.liveCount also moves with suites running in parallel.
        #expect(loop.liveHandleCount == 0)
    }
}

private final class TestThread: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func start() {
        var t = pthread_t()
        let ctx = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&t, nil, { raw in
            Unmanaged<TestThread>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, ctx)
        pthread_detach(t)
    }
}
