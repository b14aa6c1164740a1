/// A histogram with fixed bucket bounds, for observations made on the hot path: recording one
/// is a short scan of the bounds and three additions to integers it owns, nothing allocated
/// (its counts are allocated once, at creation, and changed in place while nobody else holds
/// them). A scrape reads it and renders cumulative counts, as Prometheus histograms are.
///
/// Values are unsigned integers in the unit the owner chose (nanoseconds for durations, a count
/// for sizes); ``scale`` converts them to the unit rendered (seconds: 1e-9).
public struct FixedHistogram: Equatable, Sendable {
    /// The buckets' upper bounds, ascending, inclusive (`le`); a last, implicit bucket holds the
    /// rest (`+Inf`).
    public let bounds: [UInt64]
    /// What one unit of a value is in the rendered unit.
    public let scale: Double
    /// Observations per bucket (not cumulative); one more than ``bounds`` (the last is `+Inf`).
    public private(set) var counts: [UInt64]
    /// The sum of every value observed.
    public private(set) var sum: UInt64 = 0
    /// How many values were observed.
    public private(set) var count: UInt64 = 0

    /// An empty histogram over `bounds` (ascending).
    public init(bounds: [UInt64], scale: Double = 1) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.bounds = bounds
        self.scale = scale
        self.counts = [UInt64](repeating: 0, count: bounds.count + 1)
    }

    /// Records `value`.
    @inline(__always)
    public mutating func observe(_ value: UInt64) {
        var bucket = 0
        while bucket < bounds.count && value > bounds[bucket] { bucket += 1 }
        counts[bucket] &+= 1
        sum &+= value
        count &+= 1
    }

    /// Each bound in the rendered unit with how many values were at most it; the last pair is
    /// `(+infinity, count)`.
    public var cumulative: [(upperBound: Double, count: UInt64)] {
        var running: UInt64 = 0
        var out: [(upperBound: Double, count: UInt64)] = []
        out.reserveCapacity(counts.count)
        for (index, n) in counts.enumerated() {
            running &+= n
            out.append((index < bounds.count ? Double(bounds[index]) * scale : .infinity, running))
        }
        return out
    }

    /// ``sum`` in the rendered unit.
    public var scaledSum: Double { Double(sum) * scale }

    /// Durations, in nanoseconds rendered as seconds: 25 µs to 10 s.
    public static func seconds() -> FixedHistogram {
        FixedHistogram(
            bounds: [25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
                     1_000_000, 2_500_000, 10_000_000].map { $0 * 1000 },
            scale: 1e-9)
    }

    /// Counts from 1 to 4096, by powers of two.
    public static func sizes() -> FixedHistogram {
        FixedHistogram(bounds: (0...12).map { 1 << $0 })
    }
}
