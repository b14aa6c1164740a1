/// When to hand freed heap memory back to the system after a burst of TLS handshakes.
///
/// A TLS handshake allocates about 45 KB of short-lived buffers (OpenSSL's handshake message
/// buffer, 16 KB record buffers, the handshake's buffering BIO) between the few kilobytes an
/// established connection keeps. After a thousand handshakes at once, malloc keeps the freed
/// buffers as holes between live connections, and the process stays at the burst's peak: 46 KB
/// of RSS per connection held, where 16 KB is in use (measured, BENCHMARKS.md's TLS section).
/// `malloc_trim` returns those holes' pages. This type decides when that is worth a call: once
/// no handshake is under way, at least ``minimumHandshakes`` handshakes began since the last
/// trim, and at least ``minimumIntervalMilliseconds`` passed since it (a trim walks the heap).
///
/// Pure value: the caller reports handshakes and asks at the end of a burst.
public struct HeapTrimPolicy: Sendable, Equatable {
    /// Fewer handshakes than this since the last trim are not worth a trim.
    public var minimumHandshakes: Int
    /// Trims are at least this far apart.
    public var minimumIntervalMilliseconds: UInt64
    /// Handshakes begun since the last trim.
    public private(set) var handshakesSinceTrim = 0
    private var lastTrimMilliseconds: UInt64?

    /// A policy trimming after `minimumHandshakes` handshakes (default 64), at most once every
    /// `minimumIntervalMilliseconds` (default 1,000).
    public init(minimumHandshakes: Int = 64, minimumIntervalMilliseconds: UInt64 = 1000) {
        self.minimumHandshakes = minimumHandshakes
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
    }

    /// A TLS handshake began.
    public mutating func handshakeBegan() {
        handshakesSinceTrim += 1
    }

    /// Asked when no handshake is under way any more, at monotonic time `now` (ms): true when
    /// the caller should trim now, which this records (the count starts again from 0).
    public mutating func shouldTrim(now: UInt64) -> Bool {
        guard handshakesSinceTrim >= minimumHandshakes else { return false }
        if let last = lastTrimMilliseconds, now < last || now - last < minimumIntervalMilliseconds {
            return false
        }
        handshakesSinceTrim = 0
        lastTrimMilliseconds = now
        return true
    }
}
