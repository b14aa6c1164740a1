import CLibUV

/// The monotonic clock, through libuv's `uv_hrtime` (`CLOCK_MONOTONIC` on Linux): the clock
/// systemd's `MONOTONIC_USEC=` refers to, comparable across processes on one machine, and
/// unaffected by changes of the wall clock. Any thread.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (the machine's boot, on Linux).
    public static func nanoseconds() -> UInt64 { uv_hrtime() }

    /// Microseconds since the same point.
    public static func microseconds() -> UInt64 { uv_hrtime() / 1_000 }

    /// Milliseconds since the same point.
    public static func milliseconds() -> UInt64 { uv_hrtime() / 1_000_000 }
}
