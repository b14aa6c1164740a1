/// The service manager's watchdog settings, from `WATCHDOG_USEC` and `WATCHDOG_PID`
/// (`sd_watchdog_enabled(3)` semantics).
///
/// The service must send `WATCHDOG=1` more often than every ``timeoutMicroseconds``;
/// it pings every ``pingIntervalMicroseconds``, half the timeout, as systemd recommends.
public struct WatchdogConfig: Equatable, Sendable {
    /// `WATCHDOG_USEC`: the watchdog timeout in microseconds, always >= 1.
    public let timeoutMicroseconds: UInt64

    /// Creates a config for a timeout in microseconds.
    /// - Precondition: `timeoutMicroseconds >= 1`.
    public init(timeoutMicroseconds: UInt64) {
        precondition(timeoutMicroseconds >= 1, "watchdog timeout must be positive")
        self.timeoutMicroseconds = timeoutMicroseconds
    }

    /// Half the timeout, at least 1 µs: how often to send `WATCHDOG=1`.
    public var pingIntervalMicroseconds: UInt64 { max(1, timeoutMicroseconds / 2) }

    /// The ping interval rounded down to whole milliseconds, at least 1: what a libuv timer takes.
    public var pingIntervalMilliseconds: UInt64 { max(1, pingIntervalMicroseconds / 1000) }

    /// Reads the watchdog variables.
    ///
    /// - Returns: nil (no watchdog pings) when `WATCHDOG_USEC` is unset, not a strict decimal,
    ///   or 0; or when `WATCHDOG_PID` is set and is not exactly `pid` (the watchdog is meant
    ///   for another process, e.g. our parent). Otherwise the config.
    public static func parse(environment: [String: String], pid: Int32) -> WatchdogConfig? {
        guard let usecText = environment["WATCHDOG_USEC"],
              let usec = SystemdParsing.unsignedDecimal(usecText), usec >= 1 else {
            return nil
        }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let watchdogPID = SystemdParsing.decimal(pidText), watchdogPID == Int(pid) else {
                return nil
            }
        }
        return WatchdogConfig(timeoutMicroseconds: usec)
    }
}
