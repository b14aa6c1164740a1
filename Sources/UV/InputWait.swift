/// The decisions of ``InputPolling``, without a clock or a loop: whether the loop, about to wait
/// for input, polls or sleeps. Pure.
///
/// A wait starts at the first poll phase after one that read something and ends at the poll
/// phase that reads something; its length is recorded in a ``SpinWindow`` whether or not the
/// loop polled meanwhile. The loop polls while the wait so far is shorter than the window.
public struct InputWait: Equatable, Sendable {
    /// The usual wait and the window it gives.
    public private(set) var window: SpinWindow
    /// Reads counted when the current poll phase began.
    private var readsBefore: UInt64 = 0
    /// When the current wait began, if the loop is waiting.
    public private(set) var waitingSince: UInt64?

    /// Decisions that poll at most `limit` nanoseconds (``SpinWindow``).
    public init(limit: UInt64) {
        window = SpinWindow(limit: limit)
    }

    /// The loop is about to poll for I/O at `now`, having counted `reads` reads so far. True:
    /// poll without blocking; false: block until something happens.
    public mutating func beforePoll(at now: UInt64, reads: UInt64) -> Bool {
        readsBefore = reads
        let since = waitingSince ?? now
        waitingSince = since
        let spin = window.nanoseconds
        return spin > 0 && now &- since < spin
    }

    /// The poll ended at `now` with `reads` reads counted: if it read anything, the wait is over
    /// (true), and the loop has work to do before it waits again.
    @discardableResult
    public mutating func afterPoll(at now: UInt64, reads: UInt64) -> Bool {
        guard reads != readsBefore else { return false }
        if let since = waitingSince { window.record(now &- since) }
        waitingSince = nil
        return true
    }
}
