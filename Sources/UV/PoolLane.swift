import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial lane of short blocking jobs (the journal's syncs) on one thread of libuv's pool, with
/// one wake-up of the loop per job and no spin.
///
/// ``EventLoop/queueWork(_:completion:)`` hands each job back through libuv's internal
/// `uv_async_t`. Up to libuv 1.44 (Debian 12), the loop thread that wakes for it can spin, up to
/// 997 `pause` instructions and then `sched_yield`, while the pool thread is still between its
/// `eventfd` write and its "done" flag (libuv/libuv#2769; the spin left in 1.45, #3879). That
/// write is what wakes the loop, so the pool thread is often preempted right there: with one
/// client in `--durability always`, more than half the syncs ended in that spin, about 40 µs of
/// it on the path of every reply.
///
/// A lane keeps one pool job running while it has work. The job takes the lane's jobs in order,
/// runs each, puts it on the finished list and only then writes an `eventfd` that the loop watches
/// with a `uv_poll_t`: the woken loop has nothing to wait for. When no job comes for
/// `linger`, the pool job ends and gives its thread back (the pool, 4 threads, is shared by every
/// loop of the process); the next job starts another. While jobs keep coming, one pool thread
/// stays taken: one lane per process (the journal's) leaves the others to compaction and name
/// lookups. Loop thread only. Linux only (`eventfd`): elsewhere ``init(loop:lingerNanoseconds:)``
/// returns nil and callers use `queueWork`.
public final class PoolLane: UVHandleOwner {
    private let loop: EventLoop
    private let state: LaneState
    /// The `uv_poll_t` on the lane's `eventfd`; nil once closed (jobs then go to `queueWork`).
    private var poll: UnsafeMutablePointer<uv_poll_t>?

    /// A lane on `loop`, or nil when no `eventfd` or poll handle can be made (use `queueWork`).
    /// A pool job waits up to `lingerNanoseconds` for the next job before it ends. The lane does
    /// not keep the loop alive by itself; a running pool job does, as any work request.
    public init?(loop: EventLoop, lingerNanoseconds: UInt64 = 5_000_000) {
        loop.assertOnLoopThread()
        #if os(Linux)
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        #else
        let fd: Int32 = -1
        #endif
        guard fd >= 0 else { return nil }
        self.loop = loop
        self.state = LaneState(eventFD: fd, linger: lingerNanoseconds)
        let handle = HandleMemory.allocate(uv_poll_t.self, loop: loop)
        guard uv_poll_init(loop.raw, handle, fd) == 0 else {
            HandleMemory.freeUninitialized(handle, loop: loop)
            return nil
        }
        HandleMemory.attach(self, to: asHandle(handle))
        poll = handle
        let started = uv_poll_start(handle, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            guard let handle else { return }
            HandleMemory.owner(of: asHandle(handle), as: PoolLane.self)?.state.completeFinished(readingCounter: true)
        }
        uv_unref(asHandle(handle))
        if started != 0 {
            close()
            return nil
        }
    }

    /// Runs `work` on the lane's pool thread after the jobs submitted before it, then
    /// `completion` with its result on the loop thread. After ``close()`` the job goes to
    /// ``EventLoop/queueWork(_:completion:)`` instead, so it still completes, but in no order
    /// with the lane's jobs.
    public func submit<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result,
        completion: @escaping (Result) -> Void
    ) {
        loop.assertOnLoopThread()
        guard poll != nil else { return loop.queueWork(work, completion: completion) }
        if state.enqueue(PoolJob(work: work, completion: completion)) { startRunner() }
    }

    /// Queues the pool job that runs the lane's jobs (``LaneState``). Its `after_work_cb` runs
    /// what finished and was not completed yet (the poll handle may be closed by then).
    private func startRunner() {
        loop.queue(state)
    }

    /// Stops watching and lets the pool job end once the jobs already submitted have run; their
    /// completions still run (from the pool job's `after_work_cb`). Idempotent.
    public func close() {
        guard let handle = poll else { return }
        poll = nil
        state.stop()
        HandleMemory.close(asHandle(handle))
    }
}

/// What a lane's loop side and its pool job share, under one libuv mutex. It owns the `eventfd`,
/// closed when the last holder (the lane, a pool job) lets go: by then the poll handle is
/// closed (it holds the lane until its close callback) and no pool job can write to it.
private final class LaneState: AnyPoolJob, @unchecked Sendable {
    let eventFD: Int32
    private let linger: UInt64
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<uv_cond_t>.allocate(capacity: 1)
    // Under `mutex`. `pending` is emptied when the pool job has taken all of it; a job already
    // taken may wait there (and even complete) until then.
    private var pending: [AnyPoolJob] = []
    private var next = 0
    private var finished: [AnyPoolJob] = []
    private var running = false
    private var stopping = false

    init(eventFD: Int32, linger: UInt64) {
        self.eventFD = eventFD
        self.linger = linger
        super.init()
        precondition(uv_mutex_init(mutex) == 0 && uv_cond_init(wakeUp) == 0, "PoolLane: no mutex or condition")
    }

    deinit {
        _ = close(eventFD)
        uv_cond_destroy(wakeUp)
        uv_mutex_destroy(mutex)
        wakeUp.deallocate()
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return body()
    }

    /// Loop thread: adds `job`; true when no pool job is running, so one must be started.
    func enqueue(_ job: AnyPoolJob) -> Bool {
        locked {
            pending.append(job)
            uv_cond_signal(wakeUp)
            if running { return false }
            running = true
            return true
        }
    }

    /// Loop thread: no more jobs will come; the pool job ends once `pending` is empty.
    func stop() {
        locked {
            stopping = true
            uv_cond_signal(wakeUp)
        }
    }

    /// The pool job's end (loop thread, `after_work_cb`): what finished and was not completed.
    override func complete() { completeFinished(readingCounter: false) }

    /// Pool thread: runs jobs in order until none comes for `linger` (or the lane stops). Each
    /// finished job is on `finished` before the `eventfd` write that wakes the loop for it.
    override func runWork() {
        uv_mutex_lock(mutex)
        while true {
            if next < pending.count {
                let job = pending[next]
                next += 1
                if next == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    next = 0
                }
                uv_mutex_unlock(mutex)
                job.runWork()
                uv_mutex_lock(mutex)
                finished.append(job)
                uv_mutex_unlock(mutex)
                var one: UInt64 = 1
                _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, $0.count) }
                uv_mutex_lock(mutex)
                continue
            }
            if stopping { break }
            if uv_cond_timedwait(wakeUp, mutex, linger) != 0, next == pending.count { break }
        }
        running = false
        uv_mutex_unlock(mutex)
    }

    /// Loop thread: runs the completions of the jobs finished so far, in order, each once.
    /// From the poll callback the counter is read first, so a job finishing after the read
    /// wakes the loop again.
    func completeFinished(readingCounter: Bool) {
        if readingCounter {
            var count: UInt64 = 0
            _ = withUnsafeMutableBytes(of: &count) { read(eventFD, $0.baseAddress, $0.count) }
        }
        let jobs = locked {
            let jobs = finished
            finished.removeAll()
            return jobs
        }
        for job in jobs { job.complete() }
    }
}
