/// One piece of a sanitized document line: either an SGR colour/style sequence, or
/// something visible that takes a known number of columns.
public enum DisplayPiece: Equatable, Sendable {
    /// An SGR sequence, exactly `ESC [ <digits ; :> m` (at most ``Sanitizer/maxSGRLength`` bytes).
    case sgr(String)
    /// Visible text that contains no control character, and its width in columns (0, 1 or 2).
    /// A glyph is never split across rows.
    case glyph(String, width: Int)
}

/// Makes a document line safe to show on a terminal.
///
/// The promise: nothing the sanitizer emits can make the terminal do anything but print
/// characters and change colours. In detail:
/// - SGR sequences (`ESC [` digits, `;` and `:` `m`, no private marker, no intermediate byte)
///   pass through as ``DisplayPiece/sgr(_:)``;
/// - every other escape sequence is dropped whole: CSI with any other final byte (cursor moves,
///   clear screen, scroll regions, mode changes), OSC (`ESC ]` ... BEL or ST: titles, hyperlinks,
///   clipboard), DCS/SOS/PM/APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _` ... ST), `ESC` +
///   intermediates + final (charset selection), and two-character escapes (`ESC c`, `ESC 7`, ...).
///   A sequence cut off by the end of the line is dropped too. The 8-bit C1 forms (U+009B CSI,
///   U+009D OSC, U+0090 DCS, U+0098, U+009E, U+009F) are treated exactly like their ESC forms;
/// - backspace overstrike (`X BS X`, `_ BS X`) shows as bold and underline, as in less;
///   blinking (SGR 5, 6) and concealed (SGR 8) attributes are removed from SGR sequences;
/// - TAB expands to spaces up to the next multiple of 8 columns (counted from the line's start);
/// - every other C0 control character and DEL is shown in caret notation, `^A` ... `^_`, `^?`
///   (NUL is `^@`, a stray CR is `^M`); every other C1 control is shown as `<XX>` in hex.
public enum Sanitizer {
    /// SGR sequences longer than this many bytes are dropped rather than passed through.
    public static let maxSGRLength = 64

    private enum State {
        case normal
        case escape
        case csi(params: String, intermediate: Bool)
        case string(sawEscape: Bool, bellEnds: Bool)
        case nF
    }

    /// The pieces of one line (the line must not contain its LF). Backspace overstrike becomes
    /// bold and underline first (see ``Overstrike``); SGR sequences pass through ``SGRFilter``
    /// under `colors` (blink and conceal never pass).
    public static func pieces(_ raw: some StringProtocol, colors: ColorPolicy = .full) -> [DisplayPiece] {
        let line = Overstrike.render(raw)
        var out: [DisplayPiece] = []
        out.reserveCapacity(line.utf8.count)
        var column = 0
        var state = State.normal

        func emitVisible(_ c: Character) {
            let scalars = c.unicodeScalars
            if scalars.contains(where: isControl) {
                for s in scalars { emitScalarVisibly(s) }
                return
            }
            let w = DisplayWidth.of(c)
            out.append(.glyph(String(c), width: w))
            column += w
        }
        func emitScalarVisibly(_ s: Unicode.Scalar) {
            let v = s.value
            if v == 0x09 {
                let stop = DisplayWidth.tabStop(after: column)
                while column < stop { out.append(.glyph(" ", width: 1)); column += 1 }
            } else if v < 0x20 {
                out.append(.glyph("^" + String(Character(Unicode.Scalar(v + 0x40)!)), width: 2)); column += 2
            } else if v == 0x7F {
                out.append(.glyph("^?", width: 2)); column += 2
            } else if (0x80...0x9F).contains(v) {
                out.append(.glyph("<" + hex2(v) + ">", width: 4)); column += 4
            } else {
                let w = DisplayWidth.of(s)
                out.append(.glyph(String(s), width: w)); column += w
            }
        }

        for c in line {
            // A control character is always a grapheme cluster of its own (CR LF aside).
            let single: UInt32? = c.unicodeScalars.count == 1 ? c.unicodeScalars.first!.value : nil
            var reprocess = true
            while reprocess {
                reprocess = false
                switch state {
                case .normal:
                    switch single {
                    case 0x1B: state = .escape
                    case 0x9B: state = .csi(params: "", intermediate: false)
                    case 0x9D: state = .string(sawEscape: false, bellEnds: true)
                    case 0x90, 0x98, 0x9E, 0x9F: state = .string(sawEscape: false, bellEnds: false)
                    case 0x9C: break  // stray ST: drop
                    default: emitVisible(c)
                    }
                case .escape:
                    switch single {
                    case 0x5B: state = .csi(params: "", intermediate: false)   // [
                    case 0x5D: state = .string(sawEscape: false, bellEnds: true)  // ]
                    case 0x50, 0x58, 0x5E, 0x5F: state = .string(sawEscape: false, bellEnds: false)  // P X ^ _
                    case 0x1B: state = .escape
                    case .some(0x20...0x2F): state = .nF
                    case .some(0x30...0x7E): state = .normal  // two-character escape: dropped
                    default: state = .normal; reprocess = true  // ESC then something else: drop the ESC
                    }
                case .csi(let params, let intermediate):
                    switch single {
                    case .some(let v) where (0x30...0x3F).contains(v):
                        state = intermediate ? .csi(params: "", intermediate: true)
                            : .csi(params: params.count > maxSGRLength ? params : params + String(c),
                                   intermediate: false)
                    case .some(0x20...0x2F):
                        state = .csi(params: "", intermediate: true)
                    case .some(let v) where (0x40...0x7E).contains(v):
                        state = .normal
                        if v == 0x6D, !intermediate, let sgr = sgrSequence(params, colors: colors) { out.append(.sgr(sgr)) }
                    default:
                        state = .normal; reprocess = true  // malformed: drop what we had
                    }
                case .string(let sawEscape, let bellEnds):
                    if sawEscape {
                        if single == 0x5C { state = .normal }  // ESC \ = ST
                        else { state = .escape; reprocess = true }
                    } else {
                        switch single {
                        case 0x1B: state = .string(sawEscape: true, bellEnds: bellEnds)
                        case 0x9C: state = .normal
                        case 0x07 where bellEnds: state = .normal
                        default: break  // string content: dropped
                        }
                    }
                case .nF:
                    switch single {
                    case .some(0x20...0x2F): break
                    case .some(0x30...0x7E): state = .normal
                    default: state = .normal; reprocess = true
                    }
                }
            }
        }
        return out
    }

    /// The sanitized line as one string (SGR sequences included).
    public static func sanitize(_ line: some StringProtocol, colors: ColorPolicy = .full) -> String {
        var s = ""
        for p in pieces(line, colors: colors) {
            switch p {
            case .sgr(let q): s += q
            case .glyph(let g, _): s += g
            }
        }
        return s
    }

    /// The visible text of a line, without any SGR sequence (for searching and for
    /// server-supplied text such as names and error messages on the status line).
    public static func plainText(_ line: some StringProtocol) -> String {
        var s = ""
        for case .glyph(let g, _) in pieces(line) { s += g }
        return s
    }

    /// `ESC [ params m` when `params` holds only digits, `;` and `:` and the result is short enough.
    private static func sgrSequence(_ params: String, colors: ColorPolicy) -> String? {
        guard params.count + 3 <= maxSGRLength,
              params.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || $0 == ";" || $0 == ":" }),
              let kept = SGRFilter.filter(params, policy: colors)
        else { return nil }
        return "\u{1B}[" + kept + "m"
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F...0x9F).contains(s.value)
    }

    private static func hex2(_ v: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(v >> 4)]) + String(digits[Int(v & 0xF)])
    }
}
