#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The CPU time the calling thread (the loop's) has used: the clock of ``TurnBudget``.
///
/// Wall time would charge a client for time the kernel gave other processes: on a busy
/// machine a turn preempted after one command would look spent, and a client with many
/// commands queued would crawl at one command per turn. CPU time counts only the loop's own
/// work. It is a system call (no vDSO for CPU clocks), so callers read it every few commands.
package enum ThreadCPUTime {
    /// The calling thread's CPU time so far.
    package static func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// A stopwatch on ``ThreadCPUTime`` that reads the clock (a system call) only once started:
/// work before ``start()`` goes uncounted, and a watch never started costs no clock read.
package struct LazyCPUStopwatch {
    private var started: Duration?

    /// A watch that has not been started.
    package init() {}

    /// Whether the watch has been started.
    package var isRunning: Bool { started != nil }

    /// Starts the watch unless it runs already.
    package mutating func start() {
        if started == nil { started = ThreadCPUTime.now() }
    }

    /// CPU time since ``start()``; zero, without reading the clock, while not started.
    package func elapsed() -> Duration {
        started.map { ThreadCPUTime.now() - $0 } ?? .zero
    }

    /// Starts the watch and returns zero if it was not running; else the CPU time since it started.
    package mutating func lap() -> Duration {
        guard isRunning else { start(); return .zero }
        return elapsed()
    }
}
