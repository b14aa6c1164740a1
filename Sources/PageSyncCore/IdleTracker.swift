/// Finds connections that sent no complete command line for `idle-timeout`.
///
/// Pure: the owner reports activity with the time (monotonic milliseconds) and asks
/// which connections have been idle too long. A connection that trickles bytes without
/// ever finishing a line (slowloris) is idle: only complete lines count as activity.
public struct IdleTracker: Sendable {
    /// The idle time after which a connection is due to be closed, in milliseconds; >= 1.
    public var timeoutMilliseconds: UInt64 { didSet { timeoutMilliseconds = max(1, timeoutMilliseconds) } }
    private var lastActive: [Int: UInt64] = [:]

    /// Creates a tracker closing connections idle for `timeoutMilliseconds`.
    public init(timeoutMilliseconds: UInt64) {
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
    }

    /// Connections being tracked.
    public var count: Int { lastActive.count }

    /// `connection` opened or sent a complete line at `now`.
    public mutating func active(_ connection: Int, now: UInt64) {
        lastActive[connection] = now
    }

    /// Starts tracking each of `connections` that is not tracked yet as active at `now`; tracked
    /// ones keep their time. For a timeout turned on while connections are open (a reload):
    /// they are idle from then on.
    public mutating func adopt(_ connections: some Sequence<Int>, now: UInt64) {
        for connection in connections where lastActive[connection] == nil {
            lastActive[connection] = now
        }
    }

    /// `connection` is gone: stop tracking it.
    public mutating func remove(_ connection: Int) {
        lastActive[connection] = nil
    }

    /// The connections idle for at least the timeout at `now`, oldest id first; they are
    /// no longer tracked. Connections for which `isOpen` is false are dropped silently.
    public mutating func expire(now: UInt64, isOpen: (Int) -> Bool) -> [Int] {
        // Removed after the walk: removing while iterating would copy the whole dictionary
        // (the iterator holds a reference to its storage) on every sweep that drops anything.
        var due: [Int] = []
        var closed: [Int] = []
        for (connection, last) in lastActive {
            if !isOpen(connection) {
                closed.append(connection)
            } else if now >= last && now - last >= timeoutMilliseconds {
                due.append(connection)
            }
        }
        for connection in closed { lastActive[connection] = nil }
        for connection in due { lastActive[connection] = nil }
        return due.sorted()
    }
}
