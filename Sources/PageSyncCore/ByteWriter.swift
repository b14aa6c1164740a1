/// Writes bytes into an array allocated once, at a size bounded beforehand: how the encoders of
/// what every change sends and saves (the `PAGE` line, the `OK` of a navigation, a journal
/// record) fill their bytes without growing an array a piece at a time.
///
/// The caller states an upper bound, ``bytes(capacity:_:)`` allocates it, and each write checks
/// the bound once (a `precondition`: writing past it stops the process, never memory it does
/// not own). The array's count is what was written.
package struct ByteWriter {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// The number of bytes written so far.
    package private(set) var count = 0

    /// A writer of at most `capacity` bytes at `base` (``bytes(capacity:_:)`` and
    /// ``ByteLine/write(capacity:_:)`` make one over memory they own).
    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes `body` writes, in an array allocated once with room for `capacity` bytes (at
    /// least one). The writer and ``written(_:)``'s pointers are valid only inside `body`: do
    /// not let them escape it.
    package static func bytes(capacity: Int, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { buffer, count in
            var writer = ByteWriter(base: buffer.baseAddress!, capacity: capacity)
            body(&writer)
            count = writer.count
        }
    }

    /// Where the next `n` bytes go, after checking they fit.
    @inline(__always)
    private mutating func claim(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(n >= 0 && n <= capacity - count, "ByteWriter: writing past the stated capacity")
        defer { count += n }
        return base + count
    }

    /// Appends one byte.
    @inline(__always)
    package mutating func byte(_ value: UInt8) {
        claim(1).pointee = value
    }

    /// Appends `bytes` as they are.
    @inline(__always)
    package mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        UnsafeMutableRawPointer(claim(bytes.count)).copyMemory(from: source, byteCount: bytes.count)
    }

    /// Appends ASCII text (a field name or a keyword).
    @inline(__always)
    package mutating func ascii(_ text: StaticString) {
        text.withUTF8Buffer { bytes(UnsafeRawBufferPointer($0)) }
    }

    /// Appends the first `count` bytes of `text`'s UTF-8 as they are.
    package mutating func utf8(_ text: String, prefix count: Int) {
        precondition(count <= text.utf8.count, "ByteWriter: a prefix longer than the text")
        guard count > 0 else { return }
        let out = claim(count)
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { source in
            out.update(from: source.baseAddress!, count: count)
        }
        if copied == nil {
            for (i, b) in text.utf8.prefix(count).enumerated() { out[i] = b }
        }
    }

    /// Appends `text`'s UTF-8 with every control character (C0 including CR and LF, DEL, and
    /// C1) replaced by one space: ``ControlCharacters/replacingControls(_:)`` in bytes. C0 and
    /// DEL are one byte each; a C1 character is the two bytes `C2 80` to `C2 9F`. At most
    /// `text.utf8.count` bytes.
    package mutating func utf8ReplacingControls(_ text: String) {
        var text = text
        text.withUTF8 { source in
            let n = source.count
            let out = claim(n)
            var read = 0
            var write = 0
            while read < n {
                let b = source[read]
                if b < 0x20 || b == 0x7F {
                    out[write] = 0x20
                    read += 1
                } else if b == 0xC2, read + 1 < n, source[read + 1] >= 0x80, source[read + 1] <= 0x9F {
                    out[write] = 0x20
                    read += 2
                } else {
                    out[write] = b
                    read += 1
                }
                write += 1
            }
            count -= n - write  // a C1 character's two bytes became one
        }
    }

    /// Appends `value` in decimal, as `String(value)` would (at most 20 bytes).
    ///
    /// Two digits per division, from a table of the hundred pairs, into a length worked out
    /// first from the bit length (six numbers of every change, the `OK`'s and the `PAGE`
    /// line's, so this is on the hot path).
    package mutating func decimal(_ value: UInt64) {
        let digits = Self.decimalDigits(value)
        var at = claim(digits) + digits
        var rest = value
        Self.digitPairs.withUTF8Buffer { pairs in
            while rest >= 100 {
                let quotient = rest / 100
                let pair = Int(truncatingIfNeeded: rest &- quotient &* 100) &* 2
                at -= 2
                at[0] = pairs[pair]
                at[1] = pairs[pair &+ 1]
                rest = quotient
            }
            if rest >= 10 {
                let pair = Int(truncatingIfNeeded: rest) &* 2
                at -= 2
                at[0] = pairs[pair]
                at[1] = pairs[pair &+ 1]
            } else {
                (at - 1).pointee = UInt8(truncatingIfNeeded: rest) &+ UInt8(ascii: "0")
            }
        }
    }

    /// "00" to "99", each pair at twice its value.
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// The number of decimal digits of `value` (1 for 0): an estimate from its bit length
    /// (log10(2) is about 1233 / 4096), then one comparison with the power of ten it may reach.
    @inline(__always)
    package static func decimalDigits(_ value: UInt64) -> Int {
        let bits = 64 &- value.leadingZeroBitCount
        let estimate = (bits &* 1233) >> 12   // digits of 2^bits - 1, or one fewer
        return max(1, estimate &+ (value >= powerOfTen(estimate) ? 1 : 0))
    }

    /// 10^`n` for `n` in 0...19.
    @inline(__always)
    private static func powerOfTen(_ n: Int) -> UInt64 {
        var result: UInt64 = 1
        var k = n
        // At most 19 multiplications, and usually 4 or 5: cheaper than a global table's
        // lazy initialization check.
        while k > 0 {
            result &*= 10
            k &-= 1
        }
        return result
    }

    /// Appends `value` in decimal, negative values with a leading `-`, as `String(value)` would
    /// (at most 20 bytes).
    package mutating func decimal(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        decimal(UInt64(value.magnitude))
    }

    /// Appends `value` as 16 lower-case hex digits, zero-padded (an ``Epoch``'s form).
    package mutating func hex16(_ value: UInt64) {
        let out = claim(16)
        for i in 0..<16 {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * i)) & 0xF
            out[i] = nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
        }
    }

    /// Appends `value`'s bytes, little-endian.
    package mutating func littleEndian<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes($0) }
    }

    /// Appends `n` zero bytes (a header filled in later with ``store(littleEndian:at:)``).
    package mutating func zeros(_ n: Int) {
        claim(n).initialize(repeating: 0, count: n)
    }

    /// Overwrites bytes already written at `offset` with `value`, little-endian.
    package mutating func store<T: FixedWidthInteger>(littleEndian value: T, at offset: Int) {
        precondition(offset >= 0 && MemoryLayout<T>.size <= count - offset, "ByteWriter: storing outside what was written")
        UnsafeMutableRawPointer(base + offset).storeBytes(of: value.littleEndian, toByteOffset: 0, as: T.self)
    }

    /// The bytes written in `range`, valid until the body given to ``bytes(capacity:_:)`` returns.
    package func written(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteWriter: reading outside what was written")
        return UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }
}
