import CLibUV
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial lane of short blocking jobs (the journal's syncs) on one thread of libuv's pool, with
/// at most one wake-up of the loop per job and no wait on libuv's internal spin.
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
/// lookups. Loop thread only. Linux only (`eventfd`): elsewhere
/// ``init(loop:lingerNanoseconds:spinLimitNanoseconds:)``
/// returns nil and callers use `queueWork`.
///
/// Both sides poll before they sleep when their wait is usually short (``SpinWindow``): the
/// loop, after a submit, for the job's end while jobs usually end within the limit (an idle
/// handle keeps it from blocking in `epoll_wait`); the pool thread, after a job, for the next
/// one while one usually follows within the limit. Each poll yields the CPU (`sched_yield`) to
/// whatever else is runnable. With one client in `--durability always` the two wake-ups a sync
/// otherwise costs, one on each side, were a fifth of each change's time on a virtual machine
/// (measured; a halted virtual CPU is woken through the hypervisor). Slow jobs are not polled
/// for, nor a next job when jobs come seldom; on a single CPU neither side polls.
public final class PoolLane: UVHandleOwner {
    private let loop: EventLoop
    private let state: LaneState
    /// The `uv_poll_t` on the lane's `eventfd`; nil once closed (jobs then go to `queueWork`).
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    /// The `uv_idle_t` that keeps the loop polling while it waits for a job; nil once closed.
    private var idle: UnsafeMutablePointer<uv_idle_t>?
    private var idling = false
    /// Jobs submitted and not completed, and until when the loop polls for them.
    private var inFlight = 0
    private var pollUntil: UInt64 = 0
    /// How long a job takes from submit to completion, lately (the loop's wait).
    private var jobTime: SpinWindow

    /// The longest either side polls before it sleeps (250 µs), and the longest usual wait
    /// it polls for; 0 on a single CPU, where polling only delays the thread it waits for.
    public static let defaultSpinLimitNanoseconds: UInt64 = SpinWindow.onThisMachine(250_000)

    /// Jobs the pool thread found while polling for them (instead of being woken for them).
    public var jobsCaughtPolling: Int { state.caughtPolling }

    /// A lane on `loop`, or nil when no `eventfd` or poll handle can be made (use `queueWork`).
    /// A pool job waits up to `lingerNanoseconds` for the next job before it ends. Each side
    /// polls up to `spinLimitNanoseconds` before it sleeps (0: never). The lane does not keep
    /// the loop alive by itself; a running pool job does, as any work request.
    public init?(
        loop: EventLoop, lingerNanoseconds: UInt64 = 5_000_000,
        spinLimitNanoseconds: UInt64 = PoolLane.defaultSpinLimitNanoseconds
    ) {
        loop.assertOnLoopThread()
        #if os(Linux)
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        #else
        let fd: Int32 = -1
        #endif
        guard fd >= 0 else { return nil }
        self.loop = loop
        self.state = LaneState(eventFD: fd, linger: lingerNanoseconds, spinLimit: spinLimitNanoseconds)
        self.jobTime = SpinWindow(limit: spinLimitNanoseconds)
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
        let idle = HandleMemory.allocate(uv_idle_t.self, loop: loop)
        let initialized = uv_idle_init(loop.raw, idle)
        precondition(initialized == 0, "uv_idle_init cannot fail, but did: \(UVError(code: initialized))")
        HandleMemory.attach(self, to: asHandle(idle))
        uv_unref(asHandle(idle))
        self.idle = idle
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
        let submitted = uv_hrtime()
        let job = PoolJob(work: work) { [weak self] (result: Result) in
            self?.jobEnded(submittedAt: submitted)
            completion(result)
        }
        if state.enqueue(job, at: submitted) { startRunner() }
        inFlight += 1
        let window = jobTime.nanoseconds
        guard window > 0, let idle else { return }
        pollUntil = max(pollUntil, submitted + window)
        guard !idling else { return }
        idling = true
        uv_idle_start(idle) { handle in
            guard let handle else { return }
            HandleMemory.owner(of: asHandle(handle), as: PoolLane.self)?.pollOnce()
        }
    }

    /// Whether the loop is polling for a job's end now instead of sleeping in `epoll_wait`.
    public var isPolling: Bool { idling }

    /// Loop thread, each loop iteration while polling: stop when no job is in flight or the
    /// window has passed, else let whatever is runnable have the CPU before the next look.
    private func pollOnce() {
        guard inFlight > 0, uv_hrtime() < pollUntil else { return stopPolling() }
        sched_yield()
    }

    private func stopPolling() {
        guard idling, let idle else { return }
        idling = false
        uv_idle_stop(idle)
    }

    /// Loop thread: a job submitted at `submittedAt` completes.
    private func jobEnded(submittedAt: UInt64) {
        inFlight -= 1
        jobTime.record(uv_hrtime() &- submittedAt)
        if inFlight == 0 { stopPolling() }
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
        if let idle {
            self.idle = nil
            idling = false
            HandleMemory.close(asHandle(idle))
        }
    }
}

/// What a lane's loop side and its pool job share, under one libuv mutex. It owns the `eventfd`,
/// closed when the last holder (the lane, a pool job) lets go: by then the poll handle is
/// closed (it holds the lane until its close callback) and no pool job can write to it.
private final class LaneState: AnyPoolJob, @unchecked Sendable {
    let eventFD: Int32
    private let linger: UInt64
    /// Jobs enqueued so far: the pool thread polls it while it spins, without the mutex.
    private let posted = Atomic<UInt64>(0)
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<uv_cond_t>.allocate(capacity: 1)
    // Under `mutex`. `pending` is emptied when the pool job has taken all of it; a job already
    // taken may wait there (and even complete) until then.
    private var pending: [(job: AnyPoolJob, enqueuedAt: UInt64)] = []
    private var next = 0
    private var finished: [AnyPoolJob] = []
    private var running = false
    private var stopping = false
    /// When the last job finished, and how long the pool thread lately waited after a job for
    /// the next one.
    private var lastFinished: UInt64 = 0
    private var gap: SpinWindow
    private var caught = 0

    init(eventFD: Int32, linger: UInt64, spinLimit: UInt64) {
        self.eventFD = eventFD
        self.linger = linger
        self.gap = SpinWindow(limit: spinLimit)
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

    /// Loop thread: adds `job`, submitted at `now`; true when no pool job is running, so one
    /// must be started.
    func enqueue(_ job: AnyPoolJob, at now: UInt64) -> Bool {
        locked {
            pending.append((job, now))
            posted.add(1, ordering: .releasing)
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
            posted.add(1, ordering: .releasing)  // ends a poll for the next job
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
                let (job, enqueuedAt) = pending[next]
                gap.record(enqueuedAt > lastFinished ? enqueuedAt - lastFinished : 0)
                next += 1
                if next == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    next = 0
                }
                uv_mutex_unlock(mutex)
                job.runWork()
                uv_mutex_lock(mutex)
                lastFinished = uv_hrtime()
                finished.append(job)
                uv_mutex_unlock(mutex)
                var one: UInt64 = 1
                _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, $0.count) }
                uv_mutex_lock(mutex)
                continue
            }
            if stopping { break }
            if spin() { continue }
            if uv_cond_timedwait(wakeUp, mutex, linger) != 0, next == pending.count { break }
        }
        running = false
        uv_mutex_unlock(mutex)
    }

    /// Pool thread, holding the mutex, with no job pending: when the next job usually comes
    /// soon, polls for it (yielding the CPU between looks) instead of sleeping at once. True
    /// when a job came (or the lane stops) meanwhile. The mutex is held again on return.
    private func spin() -> Bool {
        let window = gap.nanoseconds
        guard window > 0 else { return false }
        let seen = posted.load(ordering: .acquiring)
        uv_mutex_unlock(mutex)
        let until = uv_hrtime() + window
        while posted.load(ordering: .acquiring) == seen, uv_hrtime() < until {
            sched_yield()
        }
        uv_mutex_lock(mutex)
        if next < pending.count { caught += 1 }
        return next < pending.count || stopping
    }

    /// Jobs ``spin()`` found (any thread).
    var caughtPolling: Int { locked { caught } }

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
