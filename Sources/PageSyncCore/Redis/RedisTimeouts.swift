/// Whether commands on an open Redis connection have waited too long for an answer.
///
/// A Redis that keeps the TCP connection but stops answering (paused, hung) is noticed by
/// nothing else. Commands are overdue once the oldest wait (since the first command sent with
/// none due, or since the last answer while more are due) reaches ``limitNanoseconds``. It is
/// an outage only when two ticks in a row see the same wait overdue: the loop reads its
/// sockets between ticks, so a daemon that was itself held up first reads the answers that
/// came meanwhile. Times are monotonic nanoseconds.
public struct AnswerWatchdog: Equatable, Sendable {
    /// How long commands may wait with no answer.
    public let limitNanoseconds: UInt64
    /// Since when commands have waited with no answer; nil when none is due.
    public private(set) var waitingSince: UInt64?
    /// ``waitingSince`` as the previous tick saw it overdue.
    private var overdueAtLastTick: UInt64?

    /// A watchdog with nothing due.
    public init(limitNanoseconds: UInt64) {
        self.limitNanoseconds = limitNanoseconds
    }

    /// A command was sent at `now`, with `due` commands already waiting for their answers.
    public mutating func sent(due: Int, now: UInt64) {
        if due == 0 { waitingSince = now }
    }

    /// An answer came at `now`; `due` commands still wait for theirs.
    public mutating func answered(due: Int, now: UInt64) {
        waitingSince = due > 0 ? now : nil
    }

    /// The watchdog's timer fired at `now`: true when Redis is to be called unavailable.
    public mutating func tick(now: UInt64) -> Bool {
        guard let since = waitingSince, now >= since, now - since >= limitNanoseconds else {
            overdueAtLastTick = nil
            return false
        }
        if overdueAtLastTick == since {
            overdueAtLastTick = nil
            return true
        }
        overdueAtLastTick = since
        return false
    }
}

/// What to do when the timer of the new connections' connect limit fires.
///
/// The timer alone does not show that Redis did not answer: libuv's timers count from the
/// loop's cached clock, which may predate the connect (a daemon held up while starting), and
/// timers run before the loop reads its sockets (an answer that came while the daemon was held
/// up is unread). So the wait is measured again with a fresh clock, and once the limit has
/// really passed the connections get one more loop turn, their sockets read, before it is an
/// outage (PROTOCOL.md: 503 only when Redis cannot be reached).
public enum ConnectLimit {
    /// The decision.
    public enum Decision: Equatable, Sendable {
        /// The limit has not passed yet: look again after this many milliseconds.
        case waitMore(milliseconds: UInt64)
        /// The limit has passed: look once more after one loop turn (1 ms).
        case lookOnceMore
        /// Still not connected after the last look: an outage.
        case outage
    }

    /// `waitedNanoseconds`: how long ago the connect began (nil: unknown, as good as past the
    /// limit); `lastLook`: whether this is the look ``Decision/lookOnceMore`` asked for.
    public static func decide(waitedNanoseconds: UInt64?, limitMilliseconds: UInt64, lastLook: Bool) -> Decision {
        let limit = limitMilliseconds * 1_000_000
        let waited = waitedNanoseconds ?? limit
        if waited < limit {
            let left = limit - waited
            return .waitMore(milliseconds: (left + 999_999) / 1_000_000)
        }
        return lastLook ? .outage : .lookOnceMore
    }
}
