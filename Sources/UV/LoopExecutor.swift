import CLibUV
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The serial executor of an `EventLoop`: every job runs on the loop thread, one at a time, in
/// the order it was enqueued.
///
/// `enqueue` is thread-safe: it appends to a mutex-protected queue and wakes the loop with
/// `uv_async_send` (only when the queue was empty, so bursts cost one wake-up). The loop drains the
/// jobs queued at wake-up time with `runSynchronously(on:)`; jobs enqueued meanwhile run on the
/// next iteration, so I/O is never starved.
///
/// `checkIsolated()` really compares `pthread_self()` with the thread running the loop and
/// crashes otherwise, so `assumeIsolated` from a libuv callback on the loop thread works and the
/// same call from any other thread traps.
///
/// Use it as an actor's executor:
/// ```swift
/// actor Coordinator {
///     nonisolated let loop: EventLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
/// }
/// ```
public final class LoopExecutor: SerialExecutor, @unchecked Sendable {
    private enum Item: Sendable {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Queue: ~Copyable {
        var items: [Item] = []
        /// Set by `shutdown()`: the wake-up handle is gone, new items are dropped.
        var isShutDown = false
    }

    private let thread: LoopThread
    private let queue = Mutex(Queue())
    /// The `uv_async_t` that wakes the loop. Created in `attach(to:)`, freed by its close callback.
    private nonisolated(unsafe) var wakeUp: UnsafeMutablePointer<uv_async_t>?

    init(thread: LoopThread) {
        self.thread = thread
    }

    /// Creates the wake-up handle on `loop`. Called once from `EventLoop.init`.
    func attach(to loop: EventLoop) {
        let handle = HandleMemory.allocate(uv_async_t.self, loop: loop)
        let result = uv_async_init(loop.raw, handle) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            Unmanaged<LoopExecutor>.fromOpaque(data).takeUnretainedValue().runQueued()
        }
        precondition(result == 0, "uv_async_init failed: \(UVError(code: result))")
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        wakeUp = handle
    }

    /// Queues `job` to run on the loop thread. Thread-safe. Jobs enqueued after the loop was
    /// closed (`EventLoop.closeAllHandlesAndDrain()`) never run.
    public func enqueue(_ job: consuming ExecutorJob) {
        push(.job(UnownedJob(job)))
    }

    /// An unowned reference to this executor, for `unownedExecutor` of actors that run on the loop.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps (`preconditionFailure`) unless the calling thread is the loop thread.
    public func checkIsolated() {
        guard thread.isCurrent else {
            preconditionFailure("LoopExecutor.checkIsolated(): not on the event loop thread")
        }
    }

    #if compiler(>=6.2)
    /// True when the calling thread is the loop thread (the runtime then treats the caller as
    /// isolated to every actor on this executor); false otherwise. Never nil.
    public func isIsolatingCurrentContext() -> Bool? {
        thread.isCurrent
    }
    #endif

    func enqueueClosure(_ body: @escaping @Sendable () -> Void) {
        push(.closure(body))
    }

    private func push(_ item: Item) {
        queue.withLock { queue in
            guard !queue.isShutDown, let wakeUp else { return }
            let wasEmpty = queue.items.isEmpty
            queue.items.append(item)
            // Sent under the lock, so shutdown() cannot free the handle while we use it.
            if wasEmpty { uv_async_send(wakeUp) }
        }
    }

    /// Runs the items that are queued right now (loop thread). Returns how many ran.
    @discardableResult
    func runQueued() -> Int {
        let items = queue.withLock { queue in
            let items = queue.items
            queue.items = []
            return items
        }
        for item in items {
            switch item {
            case .job(let job):
                job.runSynchronously(on: asUnownedSerialExecutor())
            case .closure(let body):
                body()
            }
        }
        return items.count
    }

    /// Runs queued items repeatedly until the queue is empty (loop thread, used while draining).
    func runQueuedNow() -> Int {
        var total = 0
        while true {
            let ran = runQueued()
            if ran == 0 { return total }
            total += ran
        }
    }

    /// Lets the loop exit even though the wake-up handle is open (used while draining).
    func unrefWakeUp() {
        if let wakeUp { uv_unref(asHandle(wakeUp)) }
    }

    /// True when `handle` is this executor's wake-up handle.
    func isWakeUpHandle(_ handle: UnsafeMutablePointer<uv_handle_t>) -> Bool {
        guard let wakeUp else { return false }
        return asHandle(wakeUp) == handle
    }

    /// Drops the items still queued, refuses new ones and closes the wake-up handle. Loop thread.
    func shutdown() {
        let handle: UnsafeMutablePointer<uv_async_t>? = queue.withLock { queue in
            queue.isShutDown = true
            queue.items = []
            let handle = wakeUp
            wakeUp = nil
            return handle
        }
        if let handle {
            handle.pointee.data = nil
            HandleMemory.close(asHandle(handle))
        }
    }
}
