import CLibUV

extension EventLoop {
    /// Runs `work` on libuv's thread pool (`uv_queue_work`) and then `completion` with its
    /// result on this loop's thread. For blocking calls that must not stall the loop: disk
    /// syncs, writing a snapshot file. Loop thread only.
    ///
    /// The pending request keeps the loop alive until `completion` has run.
    public func queueWork<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result,
        completion: @escaping (Result) -> Void
    ) {
        assertOnLoopThread()
        queue(PoolJob(work: work, completion: completion))
    }

    /// Queues `job` on libuv's pool (`uv_queue_work`): `runWork()` on a pool thread, then
    /// `complete()` on this loop's thread from libuv's `after_work_cb`. The pending request
    /// keeps the loop alive until then. Loop thread only.
    func queue(_ job: AnyPoolJob) {
        let request = HandleMemory.allocateRequest(uv_work_t.self)
        request.pointee.data = Unmanaged.passRetained(job).toOpaque()
        let status = uv_queue_work(raw, request, { request in
            guard let request else { return }
            Unmanaged<AnyPoolJob>.fromOpaque(request.pointee.data).takeUnretainedValue().runWork()
        }, { request, _ in
            guard let request else { return }
            let job = Unmanaged<AnyPoolJob>.fromOpaque(request.pointee.data).takeRetainedValue()
            HandleMemory.freeRequest(request)
            job.complete()
        })
        precondition(status == 0, "uv_queue_work failed: \(UVError(code: status))")
    }
}

/// A pool job with its result type erased, so libuv's C callbacks can reach it: `runWork()` on
/// a pool thread, then `complete()` on the loop thread.
class AnyPoolJob: @unchecked Sendable {
    func runWork() {}
    func complete() {}
}

/// The work runs on a pool thread and stores its result; the completion reads it on the loop
/// thread after libuv's `after_work_cb` (or a ``PoolLane``'s lock), which happens-after the
/// work. The completion (not `Sendable`: it captures loop-thread state) is dropped on the loop
/// thread once it has run, even when a pool thread holds the job's last reference.
final class PoolJob<Result: Sendable>: AnyPoolJob, @unchecked Sendable {
    private let work: @Sendable () -> Result
    private var completion: ((Result) -> Void)?
    private var result: Result?

    init(work: @escaping @Sendable () -> Result, completion: @escaping (Result) -> Void) {
        self.work = work
        self.completion = completion
    }

    override func runWork() { result = work() }

    override func complete() {
        guard let result, let completion else { return }
        self.completion = nil
        completion(result)
    }
}

/// libuv's thread pool (`uv_queue_work`, name resolution) as a whole.
public enum WorkPool {
    /// Starts libuv's thread pool now, from the calling thread, instead of from whichever
    /// thread first queues work (the loop thread). A new thread takes its creator's name and
    /// nice value, so the pool's threads are named and prioritized as the caller is at this
    /// moment. libuv starts the pool once per process: later calls do nothing new.
    ///
    /// Runs a private loop on the calling thread until one no-op job has gone through the pool,
    /// then closes it; no other loop is touched.
    public static func start() {
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let request = UnsafeMutablePointer<uv_work_t>.allocate(capacity: 1)
        defer {
            request.deallocate()
            loop.deallocate()
        }
        guard uv_loop_init(loop) == 0 else { return }
        if uv_queue_work(loop, request, { _ in }, { _, _ in }) == 0 {
            uv_run(loop, UV_RUN_DEFAULT)
        }
        let closed = uv_loop_close(loop)
        precondition(closed == 0, "WorkPool.start: the private loop did not close: \(UVError(code: closed))")
    }
}
