/// Builds one wire line straight into bytes, for the lines sent on every change (`PAGE`, and the
/// `OK` reply to a navigation): no `String` is formed, and the only allocation is the result.
///
/// ``finish()`` gives exactly what `Wire.line` gives for the same text: every control character
/// (C0 including CR and LF, DEL, and C1) replaced by one space, then LF.
package struct WireLineBuilder {
    package private(set) var bytes: [UInt8]

    /// Starts an empty line with room for `capacity` bytes.
    package init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends ASCII text (a field name or a keyword).
    package mutating func ascii(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends text's UTF-8.
    package mutating func text(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends `value` in decimal, as `String(value)` would.
    package mutating func decimal(_ value: UInt64) {
        let start = bytes.count
        var v = value
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        } while v != 0
        bytes[start...].reverse()
    }

    /// Appends `value` in decimal (negative values with a leading `-`), as `String(value)` would.
    package mutating func decimal(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        decimal(UInt64(value.magnitude))
    }

    /// Appends `value` as 16 lower-case hex digits, zero-padded (an ``Epoch``'s form).
    package mutating func hex16(_ value: UInt64) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { table in
            var shift = 60
            while shift >= 0 {
                bytes.append(table[Int((value >> UInt64(shift)) & 0xF)])
                shift -= 4
            }
        }
    }

    /// The line: control characters replaced by spaces, then LF.
    package mutating func finish() -> [UInt8] {
        ControlCharacters.replaceControls(inUTF8: &bytes)
        bytes.append(0x0A)
        return bytes
    }
}

extension ControlCharacters {
    /// Replaces every control character (C0, DEL, C1) in valid UTF-8 by one space: the bytes of
    /// ``replacingControls(_:)`` applied to the same text. C0 and DEL are one byte each; a C1
    /// character is the two bytes `C2 80` to `C2 9F`.
    package static func replaceControls(inUTF8 bytes: inout [UInt8]) {
        // A line almost never holds one: find the first candidate byte without writing.
        guard let first = bytes.withUnsafeBufferPointer({ $0.firstIndex { b in b < 0x20 || b == 0x7F || b == 0xC2 } })
        else { return }
        // One pass from there, compacting in place: a C1 character's two bytes become one space.
        let n = bytes.count
        let kept = bytes.withUnsafeMutableBufferPointer { buffer in
            var read = first
            var write = first
            while read < n {
                let b = buffer[read]
                if b < 0x20 || b == 0x7F {
                    buffer[write] = 0x20
                    read += 1
                } else if b == 0xC2, read + 1 < n, (0x80...0x9F).contains(buffer[read + 1]) {
                    buffer[write] = 0x20
                    read += 2
                } else {
                    buffer[write] = b
                    read += 1
                }
                write += 1
            }
            return write
        }
        bytes.removeLast(n - kept)
    }
}
