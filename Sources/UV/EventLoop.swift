import CLibUV
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which thread, if any, is currently running a loop. Shared by `EventLoop` and its `LoopExecutor`.
final class LoopThread: Sendable {
    private let owner = Mutex<pthread_t?>(nil)

    /// True when the calling thread is the one running the loop right now.
    var isCurrent: Bool {
        let me = pthread_self()
        return owner.withLock { thread in
            guard let thread else { return false }
            return pthread_equal(thread, me) != 0
        }
    }

    /// True when no thread is running the loop, or the calling thread is.
    var isCurrentOrIdle: Bool {
        let me = pthread_self()
        return owner.withLock { thread in
            guard let thread else { return true }
            return pthread_equal(thread, me) != 0
        }
    }

    /// Records the calling thread as the loop thread. Returns false (and records nothing) when
    /// another thread already runs the loop.
    func enter() -> Bool {
        let me = pthread_self()
        return owner.withLock { thread in
            if let thread, pthread_equal(thread, me) == 0 { return false }
            thread = me
            return true
        }
    }

    /// Forgets the loop thread.
    func leave() {
        owner.withLock { $0 = nil }
    }
}

/// An owned libuv loop (never the default loop) plus the executor that runs Swift jobs on it.
///
/// Threading: `run()` turns the calling thread into the loop thread until it returns. Everything
/// that touches handles (all the non-`Sendable` wrappers in this module, `stop()`) must happen on
/// the loop thread, or before the loop runs. To get onto the loop thread from elsewhere, use an
/// actor whose `unownedExecutor` is `executor.asUnownedSerialExecutor()`, or `execute(_:)`.
///
/// Creating a loop sets `SIGPIPE` to `SIG_IGN` for the whole process, so that writing to a
/// closed socket or pipe is reported as `EPIPE` instead of killing the process.
///
/// The loop stays alive (its executor's wake-up handle is referenced) until `stop()` is called,
/// so `run()` returns only after `stop()`. Call `closeAllHandlesAndDrain()` afterwards, on the
/// same thread, to close and free everything.
public final class EventLoop: @unchecked Sendable {
    /// The underlying `uv_loop_t`. Valid until `closeAllHandlesAndDrain()` returns.
    public let raw: UnsafeMutablePointer<uv_loop_t>

    /// The serial executor that runs jobs on this loop's thread, in FIFO order.
    public let executor: LoopExecutor

    let thread: LoopThread
    let handleCount = Atomic<Int>(0)

    /// Scratch buffer handed to every read on this loop (reads never overlap: one thread).
    let readBuffer: UnsafeMutableRawBufferPointer

    /// Where this loop's TLS sessions encrypt (see ``TLSOutputScratch``); made on first use.
    /// Loop thread only.
    lazy var tlsOutputScratch = TLSOutputScratch()

    /// Reads started on this loop's streams so far (``InputPolling`` compares it across a poll).
    /// Loop thread only.
    public internal(set) var readCount: UInt64 = 0

    /// Size in bytes of the buffer handed to each `uv_read_start` read.
    static let readBufferSize = 64 * 1024

    private let closed = Atomic<Bool>(false)

    /// Closers of handles made by C libraries (hiredis's libuv adapter), whose `data` is not
    /// ours: run before the walk that closes our own handles. Loop thread only.
    private var foreignClosers: [ObjectIdentifier: () -> Void] = [:]

    /// Creates and initializes a new libuv loop and its executor. Does not start running it.
    /// Throws when `uv_loop_init` fails (e.g. out of file descriptors).
    public init() throws(UVError) {
        signal(SIGPIPE, SIG_IGN)
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let result = uv_loop_init(loop)
        if result < 0 {
            loop.deallocate()
            throw UVError(code: result)
        }
        raw = loop
        thread = LoopThread()
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        executor = LoopExecutor(thread: thread)
        raw.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        executor.attach(to: self)
    }

    deinit {
        // A loop that was never drained is leaked on purpose: freeing memory libuv may still
        // reference would be worse. Drained loops were already freed in closeAllHandlesAndDrain().
        if closed.load(ordering: .acquiring) {
            readBuffer.deallocate()
        }
    }

    /// Runs the loop (`uv_run` with `UV_RUN_DEFAULT`) on the calling thread until `stop()` is
    /// called. While it runs, the calling thread is the loop thread. Must not be called while
    /// another thread runs this loop, nor after `closeAllHandlesAndDrain()`.
    public func run() {
        precondition(!closed.load(ordering: .acquiring), "EventLoop.run() after closeAllHandlesAndDrain()")
        precondition(thread.enter(), "EventLoop.run() while another thread runs the loop")
        defer { thread.leave() }
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// Makes `run()` return after the current loop iteration (`uv_stop`). Loop thread only;
    /// from another thread use `execute { loop.stop() }`.
    public func stop() {
        assertOnLoopThread()
        uv_stop(raw)
    }

    /// True when the calling thread is currently running this loop. Thread-safe.
    public var isCurrentThread: Bool { thread.isCurrent }

    /// Number of handles of this loop that were allocated and not yet freed, including the
    /// executor's internal wake-up handle while the loop is open. 0 after `closeAllHandlesAndDrain()`.
    public var liveHandleCount: Int { handleCount.load(ordering: .relaxed) }

    /// Requests of this loop that libuv counts as in flight (pool work, writes, connects, ...).
    /// Loop thread only.
    public var activeRequestCount: Int {
        assertOnLoopThread()
        return Int(raw.pointee.active_reqs.count)
    }

    /// Runs `body` on the loop thread, after the jobs already queued (same FIFO queue as the
    /// executor). Thread-safe. Closures submitted after `closeAllHandlesAndDrain()` are dropped.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        executor.enqueueClosure(body)
    }

    /// Closes every handle that is not already closing (through its wrapper, which also drops the
    /// wrapper's callbacks), runs the loop until all close callbacks ran and all queued executor
    /// jobs ran, then closes the loop (`uv_loop_close`) and frees it. Call it once, on the thread
    /// that ran the loop, after `run()` returned. Jobs enqueued after it returns are dropped.
    public func closeAllHandlesAndDrain() {
        guard !closed.load(ordering: .acquiring) else { return }
        precondition(thread.enter(), "closeAllHandlesAndDrain() while another thread runs the loop")
        defer { thread.leave() }

        // The wake-up handle must not keep uv_run alive while we drain; queued jobs are run below.
        executor.unrefWakeUp()
        var rounds = 0
        while true {
            rounds += 1
            closeForeignHandles()
            closeOpenHandles()
            uv_run(raw, UV_RUN_DEFAULT)
            let ran = executor.runQueuedNow()
            if ran == 0 && uv_loop_alive(raw) == 0 { break }
            if rounds >= 1_000 { break }  // something keeps reopening handles; give up draining
        }
        executor.shutdown()
        closeForeignHandles()
        closeOpenHandles()
        uv_run(raw, UV_RUN_DEFAULT)
        let result = uv_loop_close(raw)
        if result == 0 {
            closed.store(true, ordering: .releasing)
            raw.deallocate()
        }
    }

    /// Registers `close` to be run when the loop is torn down while `owner` still has a handle
    /// made by a C library on this loop. Loop thread only.
    func registerForeignCloser(_ owner: ObjectIdentifier, _ close: @escaping () -> Void) {
        foreignClosers[owner] = close
    }

    /// `owner`'s foreign handle is closed: nothing to run at teardown.
    func unregisterForeignCloser(_ owner: ObjectIdentifier) {
        foreignClosers[owner] = nil
    }

    private func closeForeignHandles() {
        while let (owner, close) = foreignClosers.first {
            foreignClosers[owner] = nil
            close()
        }
    }

    /// Closes every handle on the loop that is not closing yet, except the executor's wake-up
    /// handle while the executor is still open.
    private func closeOpenHandles() {
        var handles: [UnsafeMutablePointer<uv_handle_t>] = []
        withUnsafeMutablePointer(to: &handles) { list in
            uv_walk(raw, { handle, arg in
                guard let handle, let arg, uv_is_closing(handle) == 0 else { return }
                arg.assumingMemoryBound(to: [UnsafeMutablePointer<uv_handle_t>].self).pointee.append(handle)
            }, list)
        }
        for handle in handles where uv_is_closing(handle) == 0 {
            if executor.isWakeUpHandle(handle) { continue }
            if let owner = HandleMemory.owner(of: handle, as: AnyObject.self) as? UVHandleOwner {
                owner.close()
            } else {
                uv_close(handle, nil)  // not ours: close it, but never free memory we did not allocate
            }
        }
    }

    /// Debug check that the caller is on the loop thread (or the loop is not running).
    @inline(__always)
    func assertOnLoopThread(_ function: StaticString = #function) {
        assert(thread.isCurrentOrIdle, "\(function) called off the loop thread")
    }
}
