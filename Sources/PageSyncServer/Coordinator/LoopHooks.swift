import UV

/// The handles the coordinator's own life runs on: the hook before each wait for I/O, input
/// polling, the signal watchers, and the watchdog, status and forced-exit timers. Loop thread
/// only; each is closed by ``Coordinator/shutdown(reason:)`` or when the loop stops.
struct LoopHooks {
    /// Runs ``Coordinator/beforeSleep()`` once per loop iteration.
    var prepare: PrepareHook?
    /// Keeps the loop polling for input briefly when it usually comes back soon (``InputPolling``).
    var inputPolling: InputPolling?
    /// SIGINT, SIGTERM and SIGHUP.
    var signalWatchers: [SignalWatcher] = []
    /// Pings the service manager's watchdog from the loop itself.
    var watchdogTimer: UV.Timer?
    /// Reports the status line and trims the heap after departures every 2 s.
    var statusTimer: UV.Timer?
    /// The status line last reported (`STATUS=` is sent only when it changes).
    var lastStatus = ""
    /// Stops the loop once everything is settled and closed, or after half a second.
    var forceExitTimer: UV.Timer?
    /// Sends the rooms' coalesced `AUDIENCE` events when they are due (armed only then).
    var audienceTimer: UV.Timer?
    /// The rooms with an `AUDIENCE` event due, and when the timer is armed for.
    var audienceDue: [RoomRuntime] = []
    var audienceTimerAt: UInt64?
    /// Wakes the loop when web members waiting for the web's command rate may go on.
    var webRateTimer: UV.Timer?
}
