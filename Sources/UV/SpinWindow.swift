import CLibUV

/// How long a thread about to sleep until something happens polls for it first: adaptive
/// spinning, decided from how long that wait has lately taken. Pure; no clock of its own.
///
/// Waking a sleeping thread costs more than the event it waits for when that event is short.
/// The thread that sleeps in `epoll_wait` or on a condition variable is woken by another
/// CPU's interrupt, and a virtual machine's idle CPU first leaves its halt through the
/// hypervisor: tens of microseconds on every wake-up. When the wait is usually short, a thread
/// that polls for a while (yielding its CPU to anything runnable between polls) catches the
/// event without being woken, as glibc's adaptive mutexes and Linux's busy-poll sockets do.
/// When the wait is usually long (a slow disk, an idle daemon), polling would only burn CPU,
/// so the window is zero.
///
/// The usual wait is a moving average of the waits recorded (each new one weighs 1/8). Waits
/// are recorded whether or not the thread polled, so the window follows the load both ways.
public struct SpinWindow: Equatable, Sendable {
    /// The longest poll, and the longest usual wait worth polling for.
    public let limit: UInt64
    /// The usual wait (nanoseconds), once one has been recorded.
    public private(set) var usualWait: UInt64?

    /// The largest limit (1 s): polling longer than that is never right, and it keeps the
    /// arithmetic far from overflow.
    public static let maximumLimit: UInt64 = 1_000_000_000

    /// `limit` where polling can help, 0 with one CPU (`processors`, by default the ones this
    /// process may run on): there the thread waited for cannot run while the poller holds the
    /// CPU, and yielding it is what sleeping does anyway (glibc's adaptive mutexes do not spin
    /// there either). A CPU quota (cgroup `cpu.max`) is not counted.
    public static func onThisMachine(_ limit: UInt64, processors: Int = SpinWindow.usableProcessors) -> UInt64 {
        processors > 1 ? limit : 0
    }

    /// The CPUs this process may run on (libuv's `uv_available_parallelism`: on Linux its
    /// affinity mask, as `taskset` or a cpuset sets it).
    public static var usableProcessors: Int { Int(uv_available_parallelism()) }

    /// A window that never polls longer than `limit` nanoseconds (0: never polls; at most
    /// ``maximumLimit``).
    public init(limit: UInt64) {
        self.limit = min(limit, Self.maximumLimit)
    }

    /// A wait took `nanoseconds`.
    public mutating func record(_ nanoseconds: UInt64) {
        // Capped so that one very long wait (an idle hour) does not take hundreds of short
        // ones to forget: above the limit it only needs to say "long".
        let wait = min(nanoseconds, limit &* 8)
        guard let usual = usualWait else {
            usualWait = wait
            return
        }
        usualWait = usual - usual / 8 + wait / 8
    }

    /// How long to poll before sleeping: twice the usual wait, at most ``limit``; zero while
    /// no wait is known or the usual one is longer than the limit.
    public var nanoseconds: UInt64 {
        guard let usual = usualWait, usual <= limit else { return 0 }
        return min(limit, usual &* 2)
    }
}
