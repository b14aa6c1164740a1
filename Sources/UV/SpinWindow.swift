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

    /// A window that never polls longer than `limit` nanoseconds (0: never polls).
    public init(limit: UInt64) {
        self.limit = limit
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
