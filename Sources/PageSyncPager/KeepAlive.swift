/// When a client that only follows sends `PING`, so that a daemon with `idle-timeout` does not
/// close it: once it has sent nothing for half the greeting's `idle=` seconds (less one tick,
/// since the time of a command sent is the last tick's). Nothing without `idle=`.
///
/// Pure: the time comes in as the client's ticks (monotonic milliseconds).
package struct KeepAlive: Equatable, Sendable {
    /// How often the client's ticks come.
    package let tickMilliseconds: UInt64
    /// Silence after which a `PING` goes; nil when the server closes no idle connection.
    package private(set) var intervalMilliseconds: UInt64?
    /// The tick at or before which the client last sent something.
    private var lastSent: UInt64 = 0
    /// The latest tick.
    private var now: UInt64 = 0

    /// A client whose ticks come every `tickMilliseconds`, not greeted yet.
    package init(tickMilliseconds: UInt64) {
        self.tickMilliseconds = max(1, tickMilliseconds)
    }

    /// A greeting came, with `idle=` (`idleSeconds`) or without (nil): silence counts from now.
    package mutating func greeted(idleSeconds: Int?) {
        intervalMilliseconds = idleSeconds.flatMap { seconds in
            guard seconds > 0 else { return nil }
            let half = UInt64(seconds) * 500
            return max(tickMilliseconds, half > tickMilliseconds ? half - tickMilliseconds : 0)
        }
        lastSent = now
    }

    /// The connection ended: nothing to keep alive until the next greeting.
    package mutating func disconnected() { intervalMilliseconds = nil }

    /// The client sent a command (at the latest tick, as far as this type knows).
    package mutating func sent() { lastSent = now }

    /// ``sent()`` if `effects` send a command.
    package mutating func sent(in effects: [PagerEffect]) {
        if effects.contains(where: { if case .send = $0 { true } else { false } }) { sent() }
    }

    /// A tick at `milliseconds`: whether a `PING` is due now (if so, it counts as sent).
    package mutating func tick(_ milliseconds: UInt64) -> Bool {
        now = max(now, milliseconds)
        guard let interval = intervalMilliseconds, now - lastSent >= interval else { return false }
        lastSent = now
        return true
    }
}
