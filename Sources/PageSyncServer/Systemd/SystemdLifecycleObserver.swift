#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PageSyncCore

/// The daemon's ``LifecycleObserver`` under systemd: forwards each lifecycle event to
/// `sd_notify` through a ``SystemdNotifier``, and asks for watchdog pings at half of
/// `WATCHDOG_USEC`.
///
/// Without `NOTIFY_SOCKET` every call is a silent no-op and ``watchdogInterval`` is nil
/// (no timer is started for pings nobody receives).
public struct SystemdLifecycleObserver: LifecycleObserver {
    /// Where the messages go.
    public let notifier: SystemdNotifier
    /// The watchdog settings for this process, if systemd enabled the watchdog.
    public let watchdogConfig: WatchdogConfig?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`
    /// (the process environment by default) for process `pid`.
    public init(environment: [String: String] = SystemdEnvironment.current(), pid: Int32 = getpid()) {
        notifier = SystemdNotifier(environment: environment)
        watchdogConfig = WatchdogConfig.parse(environment: environment, pid: pid)
    }

    /// `READY=1` with `STATUS=<status>`.
    public func ready(status: String) { notifier.ready(status: status) }
    /// `STATUS=<text>`.
    public func status(_ text: String) { notifier.status(text) }
    /// `RELOADING=1` with `MONOTONIC_USEC=`.
    public func reloading() { notifier.reloading() }
    /// `STOPPING=1`.
    public func stopping() { notifier.stopping() }
    /// `WATCHDOG=1`.
    public func watchdog() { notifier.watchdog() }

    /// Half of `WATCHDOG_USEC` when the watchdog is on and a notify socket is set; else nil.
    public var watchdogInterval: Duration? {
        guard notifier.isEnabled, let watchdogConfig else { return nil }
        return .microseconds(Int64(clamping: watchdogConfig.pingIntervalMicroseconds))
    }
}
