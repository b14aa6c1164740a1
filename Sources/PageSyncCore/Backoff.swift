/// How long to wait before trying again after a failure: a first wait, doubling with each
/// failed attempt up to the longest, and the first again after a success. The Redis engine
/// reconnects with it (100 ms to 5 s), the journal retries writing itself again (100 ms to
/// 2 s), and the pager reconnects with it, jittered so that many pagers of one room do not
/// come back in step.
public struct Backoff: Equatable, Sendable {
    /// The first wait, and the one after a success, in milliseconds.
    public let firstMilliseconds: UInt64
    /// The longest wait, in milliseconds.
    public let longestMilliseconds: UInt64
    /// The wait ``next()`` gives next.
    public private(set) var nextMilliseconds: UInt64

    /// A backoff from `firstMilliseconds` (at least 1) doubling up to `longestMilliseconds`.
    public init(firstMilliseconds: UInt64 = 100, longestMilliseconds: UInt64) {
        self.firstMilliseconds = max(1, firstMilliseconds)
        self.longestMilliseconds = max(self.firstMilliseconds, longestMilliseconds)
        self.nextMilliseconds = self.firstMilliseconds
    }

    /// The wait before the next attempt; the one after it is twice as long (at most
    /// ``longestMilliseconds``).
    public mutating func next() -> UInt64 {
        defer { nextMilliseconds = min(nextMilliseconds * 2, longestMilliseconds) }
        return nextMilliseconds
    }

    /// ``next()``, jittered: a wait in `w/2 ... w` for the wait `w` it would give, where
    /// `unitRandom` in `0..<1` picks the point.
    public mutating func next(unitRandom: Double) -> UInt64 {
        let wait = next()
        let r = min(max(0, unitRandom), 1)
        return wait / 2 + UInt64(Double(wait - wait / 2) * r)
    }

    /// The attempt succeeded: the next failure starts from ``firstMilliseconds`` again.
    public mutating func reset() {
        nextMilliseconds = firstMilliseconds
    }
}
