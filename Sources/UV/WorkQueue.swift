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
        let job = PoolJob(work: work, completion: completion)
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

/// A pool job with its result type erased, so libuv's C callbacks can reach it.
class AnyPoolJob: @unchecked Sendable {
    func runWork() {}
    func complete() {}
}

/// The work runs on a pool thread and stores its result; the completion reads it on the loop
/// thread after libuv's `after_work_cb`, which happens-after the work (libuv synchronizes them).
final class PoolJob<Result: Sendable>: AnyPoolJob, @unchecked Sendable {
    private let work: @Sendable () -> Result
    private let completion: (Result) -> Void
    private var result: Result?

    init(work: @escaping @Sendable () -> Result, completion: @escaping (Result) -> Void) {
        self.work = work
        self.completion = completion
    }

    override func runWork() { result = work() }

    override func complete() {
        guard let result else { return }
        completion(result)
    }
}
