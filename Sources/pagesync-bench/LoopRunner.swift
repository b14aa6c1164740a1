import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// Runs an `EventLoop` on a thread of its own so that the coordinator's script can be written
/// as plain sequential code on the main thread: `sync` hands a step to the loop thread and
/// blocks until that step calls its completion.
final class LoopRunner: @unchecked Sendable {
    let loop: EventLoop
    private var thread = pthread_t()

    init() throws(UVError) {
        loop = try EventLoop()
        let context = Unmanaged.passRetained(LoopBoundBox(loop)).toOpaque()
        pthread_create(&thread, nil, { argument in
            let box = Unmanaged<LoopBoundBox>.fromOpaque(argument!).takeRetainedValue()
            box.value.run()
            box.value.closeAllHandlesAndDrain()
            return nil
        }, context)
    }

    /// Runs `body` on the loop thread and waits until it calls its completion with a value.
    func sync<T: Sendable>(_ body: @escaping (@escaping (T) -> Void) -> Void) -> T {
        let handoff = Handoff<T>()
        let box = LoopBound(body)
        loop.execute { box.value { handoff.put($0) } }
        return handoff.take()
    }

    /// Stops the loop, closes its handles and joins the thread.
    func shutdown() {
        let loop = self.loop
        loop.execute { loop.stop() }
        pthread_join(thread, nil)
    }
}

/// Heap box so the loop can cross the pthread_create boundary.
final class LoopBoundBox: @unchecked Sendable {
    let value: EventLoop
    init(_ value: EventLoop) { self.value = value }
}
