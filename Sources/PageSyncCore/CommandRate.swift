/// A rate of commands shared by a kind of client: a token bucket holding at most `burst`
/// commands, refilled at `perSecond`. A command takes one; with none left the clients wait.
///
/// Pure: the caller passes the time (monotonic nanoseconds) to ``refill(now:)``, and nothing
/// here reads a clock. What is earned and not yet a whole command is kept, so the rate holds
/// over time however often the bucket is refilled. A full bucket earns nothing: counting
/// starts at the first refill after a command was taken from it (so the time between that
/// command and that refill, a loop turn, is not earned: the rate errs on the slow side).
package struct CommandRate: Equatable, Sendable {
    /// Commands earned a second.
    package let perSecond: Int
    /// Commands the bucket holds at most: what may go at once after a quiet spell.
    package let burst: Int
    /// Commands that may go now.
    package private(set) var available: Int
    /// Nanoseconds per command earned.
    private let interval: UInt64
    /// Everything earned up to this instant is counted in ``available``; nil while the
    /// bucket has been full since the last refill (counting starts at the next one).
    private var countedUntil: UInt64?

    /// A full bucket.
    package init(perSecond: Int, burst: Int) {
        self.perSecond = max(1, perSecond)
        self.burst = max(1, burst)
        interval = max(1, 1_000_000_000 / UInt64(self.perSecond))
        available = self.burst
    }

    /// Whether no command may go until more is earned.
    package var isEmpty: Bool { available == 0 }

    /// Whether the bucket is full: nothing to earn, so a refill may be skipped.
    package var isFull: Bool { available == burst }

    /// Adds what was earned up to `now` (a time before the last refill adds nothing).
    package mutating func refill(now: UInt64) {
        guard available < burst else {
            countedUntil = nil
            return
        }
        guard let since = countedUntil else {
            countedUntil = now
            return
        }
        guard now > since else { return }
        let earned = (now - since) / interval
        if earned >= UInt64(burst - available) {
            available = burst
            countedUntil = nil
        } else {
            available += Int(earned)
            countedUntil = since + earned * interval
        }
    }

    /// One command goes (the caller checked ``isEmpty``).
    package mutating func take() {
        precondition(available > 0, "CommandRate.take() with nothing available")
        available -= 1
    }

    /// Nanoseconds from `now` until a command may go: 0 if one may go now; one interval if
    /// the bucket was not refilled since it was full.
    package func nanosecondsUntilNext(now: UInt64) -> UInt64 {
        guard available == 0 else { return 0 }
        guard let since = countedUntil else { return interval }
        let due = since + interval
        return due > now ? due - now : 0
    }
}
