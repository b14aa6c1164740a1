#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Splits a byte stream into lines. LF ends a line; one CR right before the LF is dropped.
///
/// The framer remembers where it stopped scanning, so a line that arrives in many small
/// appends is scanned once: the total work is O(n) in the number of bytes appended.
/// Consumed bytes are compacted away lazily (amortised O(1) per byte).
///
/// A line is handed out as a slice of the framer's own buffer, not a copy: reading a command
/// allocates nothing. The bytes before it are compacted away on the next call to ``next()``,
/// by which time the caller has usually let go of the slice; a caller that keeps it keeps a
/// valid value all the same (the buffer is then copied on write, as any array's is).
///
/// It never keeps more than `maxLineLength` bytes of one incomplete line once `next()` has
/// returned nil. When a line grows past the limit, `next()` yields `.tooLong` once,
/// immediately (without waiting for its LF), and the rest of that line, up to and including
/// its LF, is silently discarded. The line after it is read normally.
///
/// The limit counts every byte before the LF, including a CR that will be dropped:
/// with `maxLineLength` 4 the line `"abcd\n"` is accepted but `"abcd\r\n"` is too long.
public struct LineFramer: Sendable {
    /// One result of framing.
    public enum Frame: Equatable, Sendable {
        /// A complete line, without its LF and without a CR right before the LF: a slice of the
        /// framer's buffer (its indices are that buffer's, not zero-based).
        case line(ArraySlice<UInt8>)
        /// A line longer than `maxLineLength`; its bytes were (or will be) discarded.
        case tooLong
    }

    /// The longest line accepted, in bytes, not counting the LF.
    public let maxLineLength: Int

    private var buffer: [UInt8] = []
    /// Start of the first unconsumed byte in `buffer`.
    private var start = 0
    /// Bytes in `buffer[start..<scanned]` are known to hold no LF.
    private var scanned = 0
    /// True while the rest of a too-long line is being thrown away.
    private var discarding = false
    /// A line was just handed out: compact at the start of the next call, not under its slice.
    private var compactionDue = false

    /// Creates a framer accepting lines of up to `maxLineLength` bytes (at least 1).
    public init(maxLineLength: Int) {
        precondition(maxLineLength >= 1, "maxLineLength must be at least 1")
        self.maxLineLength = maxLineLength
    }

    /// Adds bytes read from the stream. Bytes of a line being discarded are dropped
    /// here without being copied.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var slice = bytes[...]
        if discarding && start == buffer.count {
            // Everything buffered has been consumed: skip straight to the next LF.
            guard let base = slice.base.baseAddress, !slice.isEmpty else { return }
            let from = base + slice.startIndex
            guard let hit = memchr(from, 0x0A, slice.count) else { return }
            let lf = slice.startIndex + (UnsafeRawPointer(hit) - UnsafeRawPointer(from))
            discarding = false
            slice = slice[(lf + 1)...]
        }
        guard !slice.isEmpty else { return }
        buffer.append(contentsOf: slice)
    }

    /// Adds bytes read from the stream.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        let copied = Array(bytes)
        copied.withUnsafeBytes { append($0) }
    }

    /// The number of bytes held and not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - start }

    /// The bytes the buffer has room for (for tests: what a quiet connection costs).
    public var bufferCapacity: Int { buffer.capacity }

    /// The most buffer capacity kept once its bytes are consumed. A larger buffer (one read of
    /// a burst or of a long line: up to 64 KiB) is given back, or its unconsumed bytes moved
    /// to one of their size, so a connection that goes quiet after a burst holds about its
    /// partial line, not the burst. A client that sends one command at a time never gets here.
    public static let retainedCapacity = 4096

    /// Returns the next frame, or nil when more bytes are needed.
    public mutating func next() -> Frame? {
        if compactionDue {
            compactionDue = false
            compact()
        }
        while true {
            let end = buffer.count
            if discarding {
                if let lf = findLF(from: start, to: end) {
                    start = lf + 1
                    scanned = start
                    discarding = false
                    continue
                }
                start = end
                scanned = end
                compact()
                return nil
            }
            if let lf = findLF(from: max(scanned, start), to: end) {
                let lineStart = start
                start = lf + 1
                scanned = start
                if lf - lineStart > maxLineLength {
                    compact()
                    return .tooLong
                }
                var lineEnd = lf
                if lineEnd > lineStart && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                compactionDue = true
                return .line(buffer[lineStart..<lineEnd])
            }
            scanned = end
            if end - start > maxLineLength {
                // Too long and still no LF: report now, discard until the LF.
                discarding = true
                start = end
                scanned = end
                compact()
                return .tooLong
            }
            compact()
            return nil
        }
    }

    /// Index of the first LF in `buffer[from..<to]`, using memchr.
    private func findLF(from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            let base = raw.baseAddress! + from
            guard let hit = memchr(base, 0x0A, to - from) else { return nil }
            return from + (UnsafeRawPointer(hit) - base)
        }
    }

    /// Drops consumed bytes when that is cheap relative to the work already done, and gives
    /// back a buffer larger than ``retainedCapacity`` that its unconsumed bytes do not fill
    /// by half (copying them, so at most as many bytes as were consumed since the last copy).
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            start = 0
            scanned = 0
        } else if buffer.capacity > Self.retainedCapacity && 2 * (buffer.count - start) < buffer.capacity {
            buffer = Array(buffer[start...])
            scanned -= start
            start = 0
        } else if start >= 4096 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
    }
}
