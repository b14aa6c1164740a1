import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a busy loop polling for input for a short while instead of sleeping in `epoll_wait`,
/// when input usually comes back soon after the loop runs out of work (adaptive spinning,
/// ``SpinWindow``; Linux's `busy_poll` sockets do the same in the kernel, for devices that
/// support it, and loopback does not).
///
/// A closed-loop client sends its next command tens of microseconds after its reply left; the
/// loop that sleeps meanwhile is woken by an interrupt from another CPU, and on a virtual machine
/// a halted CPU first leaves its halt through the hypervisor. Polling, the loop sees the command
/// without that wake-up. It polls at most twice the usual wait and at most the limit, yielding
/// the CPU (`sched_yield`) between looks, and not at all while the usual wait is longer than the
/// limit (an idle daemon, clients that think between commands).
///
/// The decisions are ``InputWait``'s: the prepare phase asks whether to poll, the check phase
/// (right after the poll) says whether anything was read (``EventLoop/readCount``). Loop
/// thread only; ``close()`` closes its three handles.
public final class InputPolling: UVHandleOwner {
    private let loop: EventLoop
    private var prepare: UnsafeMutablePointer<uv_prepare_t>?
    private var check: UnsafeMutablePointer<uv_check_t>?
    private var idle: UnsafeMutablePointer<uv_idle_t>?
    private var idling = false
    private var wait: InputWait
    /// Loop iterations that polled instead of sleeping, so far.
    public private(set) var iterationsPolled = 0
    /// Looks the loop took while polling (idle callbacks), so far.
    public private(set) var looks = 0

    /// The longest a loop polls for input (100 µs), and the longest usual wait it polls for;
    /// 0 on a single CPU, where polling only delays the client it waits for.
    public static let defaultLimitNanoseconds: UInt64 = SpinWindow.onThisMachine(100_000)

    /// Starts deciding, each loop iteration, whether `loop` polls. Loop thread only.
    public init(loop: EventLoop, limitNanoseconds: UInt64 = InputPolling.defaultLimitNanoseconds) {
        loop.assertOnLoopThread()
        self.loop = loop
        wait = InputWait(limit: limitNanoseconds)
        let prepare = HandleMemory.allocate(uv_prepare_t.self, loop: loop)
        let check = HandleMemory.allocate(uv_check_t.self, loop: loop)
        let idle = HandleMemory.allocate(uv_idle_t.self, loop: loop)
        let initialized = (uv_prepare_init(loop.raw, prepare), uv_check_init(loop.raw, check), uv_idle_init(loop.raw, idle))
        precondition(initialized == (0, 0, 0), "uv_prepare_init, uv_check_init and uv_idle_init cannot fail, but one did")
        for handle in [asHandle(prepare), asHandle(check), asHandle(idle)] {
            HandleMemory.attach(self, to: handle)
            uv_unref(handle)
        }
        self.prepare = prepare
        self.check = check
        self.idle = idle
        uv_prepare_start(prepare) { handle in
            guard let handle else { return }
            HandleMemory.owner(of: asHandle(handle), as: InputPolling.self)?.beforePoll()
        }
        uv_check_start(check) { handle in
            guard let handle else { return }
            HandleMemory.owner(of: asHandle(handle), as: InputPolling.self)?.afterPoll()
        }
    }

    /// Whether the loop polls instead of sleeping in this iteration.
    public var isPolling: Bool { idling }

    /// Prepare phase: the loop is about to poll. Decides whether it may block.
    private func beforePoll() {
        if wait.beforePoll(at: uv_hrtime(), reads: loop.readCount) {
            iterationsPolled += 1
            startPolling()
        } else {
            stopPolling()
        }
    }

    /// Check phase, right after the poll. Input read: stop polling, so that the next
    /// iteration's idle phase, which runs before the prepare phase that sends the reply, does
    /// not yield the CPU first; that prepare phase decides afresh (the poll after it still does
    /// not block if it polls).
    private func afterPoll() {
        if wait.afterPoll(at: uv_hrtime(), reads: loop.readCount) { stopPolling() }
    }

    private func startPolling() {
        guard !idling, let idle else { return }
        idling = true
        uv_idle_start(idle) { handle in
            guard let handle, let polling = HandleMemory.owner(of: asHandle(handle), as: InputPolling.self) else { return }
            polling.looks += 1
            sched_yield()
        }
    }

    private func stopPolling() {
        guard idling, let idle else { return }
        idling = false
        uv_idle_stop(idle)
    }

    /// Stops and closes the handles. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        for handle in [prepare.map(asHandle), check.map(asHandle), idle.map(asHandle)] {
            if let handle { HandleMemory.close(handle) }
        }
        prepare = nil
        check = nil
        idle = nil
        idling = false
    }
}
