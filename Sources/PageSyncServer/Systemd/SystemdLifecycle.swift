import PageSyncCore

/// The daemon's lifecycle told to systemd through ``SystemdNotifier``:
/// `READY=1`, `STATUS=`, `RELOADING=1`, `STOPPING=1` and `WATCHDOG=1` at half
/// of `WATCHDOG_USEC`. Silent when `NOTIFY_SOCKET` is unset.
public struct SystemdLifecycle: LifecycleObserver {
    private let notifier: SystemdNotifier
    /// Half of `WATCHDOG_USEC` when the watchdog is on and meant for this process.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    public init(environment: [String: String] = SystemdEnvironment.current(), pid: Int32 = SystemdEnvironment.pid) {
        notifier = SystemdNotifier(environment: environment)
        watchdogInterval = notifier.isEnabled
            ? WatchdogConfig.parse(environment: environment, pid: pid).map { .microseconds($0.pingIntervalMicroseconds) }
            : nil
    }

    /// Whether messages are really sent.
    public var isEnabled: Bool { notifier.isEnabled }

    public func ready(status: String) { _ = notifier.ready(status: status) }
    public func status(_ text: String) { _ = notifier.status(text) }
    public func reloading() { _ = notifier.reloading() }
    public func stopping() { _ = notifier.stopping() }
    public func watchdog() { _ = notifier.watchdog() }
}
