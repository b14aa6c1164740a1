/// Hooks for a service manager (systemd's sd_notify). Every method is optional
/// work: the default implementation does nothing.
public protocol LifecycleObserver: Sendable {
    /// Listening, and state restored.
    func ready(status: String)
    /// A one-line status for `systemctl status`.
    func status(_ text: String)
    /// A reload (SIGHUP) started.
    func reloading()
    /// Shutdown started.
    func stopping()
    /// The loop is alive.
    func watchdog()
    /// How often ``watchdog()`` must be called, if at all.
    var watchdogInterval: Duration? { get }
}

extension LifecycleObserver {
    public func ready(status: String) {}
    public func status(_ text: String) {}
    public func reloading() {}
    public func stopping() {}
    public func watchdog() {}
    public var watchdogInterval: Duration? { nil }
}

/// A ``LifecycleObserver`` that does nothing.
public struct NoLifecycleObserver: LifecycleObserver {
    /// Creates it.
    public init() {}
}
