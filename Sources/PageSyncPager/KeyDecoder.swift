/// Turns the bytes a terminal sends in raw mode into ``Key``s.
///
/// Bytes may be split across reads anywhere (inside an escape sequence or a UTF-8
/// character): the decoder keeps the incomplete tail and finishes it on the next
/// ``feed(_:)``. Its memory is bounded: an escape sequence longer than
/// ``maxSequenceLength`` bytes is dropped and the rest of it is discarded up to its
/// final byte; an incomplete UTF-8 character holds at most 3 bytes.
///
/// A lone ESC is ambiguous (the Escape key, or the start of a sequence whose other
/// bytes are still on the way). While ``needsTimeout`` is true the caller should
/// call ``timeout()`` after about 50 ms without new input.
///
/// Decoded:
/// - CSI `ESC [ A/B/C/D` and SS3 `ESC O A/B/C/D`: arrows; `ESC [ 5 ~` / `ESC [ 6 ~`: Page Up/Down;
/// - Home: `ESC [ H`, `ESC [ 1 ~`, `ESC [ 7 ~`, `ESC O H`; End: `ESC [ F`, `ESC [ 4 ~`, `ESC [ 8 ~`, `ESC O F`;
/// - a CSI key with modifier parameters (`ESC [ 1 ; 5 C`, `ESC [ 5 ; 2 ~`) decodes to its base key;
/// - CR and LF: ``Key/enter``; DEL and BS: ``Key/backspace``; TAB: ``Key/tab``; other C0 bytes: ``Key/ctrl(_:)``;
/// - ESC followed by a byte that starts no sequence (Alt+x): ``Key/escape`` then that byte's key.
///
/// Dropped: every other complete CSI sequence (private parameters such as mouse
/// reports `ESC [ < ...`, focus events, bracketed-paste markers, Insert/Delete,
/// function keys), SS3 function keys, and invalid UTF-8 bytes.
public struct KeyDecoder: Sendable {
    /// The longest escape sequence the decoder buffers; longer ones are dropped.
    public static let maxSequenceLength = 32

    private var pending: [UInt8] = []
    /// True while discarding the rest of an over-long CSI sequence up to its final byte.
    private var discardingCSI = false

    /// A decoder with nothing buffered.
    public init() {}

    /// True when the buffered bytes start with ESC and could be a lone Escape key:
    /// call ``timeout()`` if no more input arrives within about 50 ms.
    public var needsTimeout: Bool { pending.first == 0x1B }

    /// How many bytes are buffered (never more than ``maxSequenceLength``).
    public var bufferedByteCount: Int { pending.count }

    /// Decodes as many keys as the bytes so far allow; keeps an incomplete tail for the next call.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        var keys: [Key] = []
        for byte in bytes {
            if discardingCSI {
                if (0x40...0x7E).contains(byte) { discardingCSI = false }
                else if !(0x20...0x3F).contains(byte) {
                    discardingCSI = false
                    pending.append(byte)
                    drain(into: &keys, final: false)
                }
                continue
            }
            pending.append(byte)
            drain(into: &keys, final: false)
        }
        return keys
    }

    /// The input went quiet: a pending ESC is the Escape key, and any bytes after it
    /// (an escape sequence cut short) decode as ordinary keys. An incomplete UTF-8
    /// character is dropped.
    public mutating func timeout() -> [Key] {
        var keys: [Key] = []
        drain(into: &keys, final: true)
        return keys
    }

    private enum Step {
        case keys([Key], consumed: Int)
        case incomplete
    }

    private mutating func drain(into keys: inout [Key], final: Bool) {
        while !pending.isEmpty {
            switch step(final: final) {
            case .keys(let out, let consumed):
                keys.append(contentsOf: out)
                pending.removeFirst(consumed)
            case .incomplete:
                if pending.count >= Self.maxSequenceLength {
                    // An over-long CSI: drop what we have, discard the rest up to its final byte.
                    pending.removeAll()
                    discardingCSI = true
                }
                return
            }
        }
    }

    private func step(final: Bool) -> Step {
        let b = pending[0]
        switch b {
        case 0x1B:
            return escapeStep(final: final)
        case 0x0D, 0x0A:
            return .keys([.enter], consumed: 1)
        case 0x7F, 0x08:
            return .keys([.backspace], consumed: 1)
        case 0x09:
            return .keys([.tab], consumed: 1)
        case 0x00:
            return .keys([.ctrl("@")], consumed: 1)
        case 0x01...0x1A:
            return .keys([.ctrl(Character(Unicode.Scalar(b + 0x60)))], consumed: 1)
        case 0x1C...0x1F:
            return .keys([.ctrl(Character(Unicode.Scalar(b + 0x40)))], consumed: 1)
        case 0x20...0x7E:
            return .keys([.char(Character(Unicode.Scalar(b)))], consumed: 1)
        default:
            return utf8Step(final: final)
        }
    }

    private func utf8Step(final: Bool) -> Step {
        let b = pending[0]
        let length: Int
        switch b {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .keys([], consumed: 1)  // continuation byte or invalid lead: drop
        }
        var available = 1
        while available < length && available < pending.count {
            let c = pending[available]
            guard (0x80...0xBF).contains(c) else { return .keys([], consumed: available) }
            available += 1
        }
        if available < length {
            return final ? .keys([], consumed: available) : .incomplete
        }
        let scalar: Unicode.Scalar?
        switch length {
        case 2: scalar = Unicode.Scalar((UInt32(b & 0x1F) << 6) | UInt32(pending[1] & 0x3F))
        case 3:
            let v = (UInt32(b & 0x0F) << 12) | (UInt32(pending[1] & 0x3F) << 6) | UInt32(pending[2] & 0x3F)
            scalar = v >= 0x800 ? Unicode.Scalar(v) : nil
        default:
            let v = (UInt32(b & 0x07) << 18) | (UInt32(pending[1] & 0x3F) << 12)
                | (UInt32(pending[2] & 0x3F) << 6) | UInt32(pending[3] & 0x3F)
            scalar = (0x10000...0x10FFFF).contains(v) ? Unicode.Scalar(v) : nil
        }
        guard let scalar else { return .keys([], consumed: length) }  // overlong or surrogate
        if (0x80...0x9F).contains(scalar.value) { return .keys([], consumed: length) }  // C1 control
        return .keys([.char(Character(scalar))], consumed: length)
    }

    private func escapeStep(final: Bool) -> Step {
        guard pending.count >= 2 else {
            return final ? .keys([.escape], consumed: 1) : .incomplete
        }
        switch pending[1] {
        case UInt8(ascii: "["):
            return csiStep(final: final)
        case UInt8(ascii: "O"):
            guard pending.count >= 3 else {
                return final ? .keys([.escape, .char("O")], consumed: 2) : .incomplete
            }
            // Not an SS3 key: the ESC was an Escape key, "O" was typed.
            guard (0x40...0x7E).contains(pending[2]) else { return .keys([.escape, .char("O")], consumed: 2) }
            // F1-F4 and keypad keys are dropped.
            return .keys(Self.cursorKey(final: pending[2]).map { [$0] } ?? [], consumed: 3)
        case 0x1B:
            return .keys([.escape], consumed: 1)
        default:
            // ESC + another byte (Alt+x): Escape, then that byte decodes on its own.
            return .keys([.escape], consumed: 1)
        }
    }

    private func csiStep(final: Bool) -> Step {
        // ESC [ params(0x30-0x3F)* intermediates(0x20-0x2F)* final(0x40-0x7E)
        var i = 2
        while i < pending.count, (0x30...0x3F).contains(pending[i]) { i += 1 }
        let paramsEnd = i
        while i < pending.count, (0x20...0x2F).contains(pending[i]) { i += 1 }
        guard i < pending.count else {
            return final ? .keys([.escape, .char("[")], consumed: 2) : .incomplete
        }
        let finalByte = pending[i]
        guard (0x40...0x7E).contains(finalByte) else {
            // Malformed: drop the sequence so far; the offending byte decodes on its own.
            return .keys([], consumed: i)
        }
        let consumed = i + 1
        if paramsEnd != i { return .keys([], consumed: consumed) }  // intermediates: unknown
        let params = pending[2..<paramsEnd]
        // Private parameter markers (< = > ?) mean mouse reports and the like.
        if let first = params.first, (0x3C...0x3F).contains(first) { return .keys([], consumed: consumed) }
        // Only digits and ';' are understood.
        guard params.allSatisfy({ $0 == UInt8(ascii: ";") || (0x30...0x39).contains($0) }) else {
            return .keys([], consumed: consumed)
        }
        let fields = params.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        let firstNumber: Int? = fields.first.flatMap { f in
            f.isEmpty ? nil : (f.count <= 4 ? Int(String(decoding: f, as: UTF8.self)) : -1)
        }
        let key: Key?
        if finalByte == UInt8(ascii: "~") {
            switch firstNumber {
            case 1, 7: key = .home
            case 4, 8: key = .end
            case 5: key = .pageUp
            case 6: key = .pageDown
            default: key = nil
            }
        } else {
            key = Self.cursorKey(final: finalByte)
        }
        // Letter-final keys take at most "1;<modifier>" as parameters.
        if finalByte != UInt8(ascii: "~"), let n = firstNumber, n != 1 { return .keys([], consumed: consumed) }
        return .keys(key.map { [$0] } ?? [], consumed: consumed)
    }

    /// The key a cursor sequence's final letter names, the same after `ESC [` (CSI) and after
    /// `ESC O` (SS3, what terminals send in application cursor mode): arrows, Home and End.
    private static func cursorKey(final byte: UInt8) -> Key? {
        switch byte {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        default: return nil
        }
    }
}
