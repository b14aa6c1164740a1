#if canImport(Glibc)
import Glibc
#endif
import PageSyncCore
import UV

/// What `INFO` and `/metrics` need besides the counters: when the daemon started, the metrics
/// listener, and the last `/metrics` body. Loop thread only, like the coordinator that holds it.
struct Monitoring {
    /// Monotonic nanoseconds at start.
    let startedNanoseconds = MonotonicClock.nanoseconds()
    /// Wall-clock seconds since 1970 at start.
    let startedWallSeconds = Monitoring.wallClockSeconds()
    /// The `--metrics-listen` listener, while it runs.
    var server: HTTPServer?
    /// The Prometheus series `/metrics` renders.
    let exposition = MetricsExposition()
    /// The last `/metrics` body and the monotonic millisecond it was rendered in: scrapes within
    /// one millisecond share it, so a thousand at once cost the loop a few renderings, not a
    /// thousand.
    var lastBody: (body: [UInt8], at: UInt64)?
    /// How long the last rendering took, in nanoseconds.
    var lastRenderNanoseconds: UInt64?

    static func wallClockSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// CPU time of the process (user and system), in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `host:port` as written in addresses (`[::1]:7777` for IPv6).
    static func address(_ bound: (host: String, port: Int)?) -> String? {
        guard let bound else { return nil }
        return (bound.host.contains(":") ? "[\(bound.host)]" : bound.host) + ":\(bound.port)"
    }
}
