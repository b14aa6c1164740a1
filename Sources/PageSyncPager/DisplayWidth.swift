/// How many terminal columns text takes.
///
/// Rules (the ones terminals follow in practice):
/// - East Asian Wide and Fullwidth characters (CJK ideographs, kana, Hangul syllables,
///   fullwidth forms) and emoji with emoji presentation take 2 columns;
/// - nonspacing and enclosing combining marks (Mn, Me), format characters (Cf, such as
///   ZERO WIDTH JOINER), Hangul medial/final jamo and control characters take 0 columns;
/// - everything else takes 1 column.
///
/// A `Character` (grapheme cluster) is as wide as its widest scalar, and 2 when it is an
/// emoji turned into emoji presentation by VARIATION SELECTOR-16; a cluster made only of
/// zero-width scalars is 0 wide. Control characters count 0 here: ``Sanitizer`` replaces
/// them with visible text before anything is measured for display.
public enum DisplayWidth {
    /// Tab stops are every this many columns.
    public static let tabStop = 8

    /// The width of one scalar: 0, 1 or 2.
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return 0 }
        if v < 0x300 { return 1 }  // Latin-1 and friends (SOFT HYPHEN shows as 1 in terminals)
        if (0x1160...0x11FF).contains(v) || v == 0x200B { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format:
            return 0
        default:
            break
        }
        if isWide(v) || scalar.properties.isEmojiPresentation { return 2 }
        return 1
    }

    /// The width of one grapheme cluster: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let s = scalars.first { return of(s) }
        var width = 0
        var emojiCapable = false
        for s in scalars {
            let w = of(s)
            if w > width { width = w }
            if s.properties.isEmoji { emojiCapable = true }
            if s.value == 0xFE0F && emojiCapable { return 2 }
        }
        return width
    }

    /// The width of a string without tabs or control characters (sum of its clusters).
    public static func of(_ string: some StringProtocol) -> Int {
        var total = 0
        for c in string { total += of(c) }
        return total
    }

    /// The column a tab at `column` advances to: the next multiple of ``tabStop``.
    public static func tabStop(after column: Int) -> Int {
        (column / tabStop + 1) * tabStop
    }

    /// Whether `value` lies in an East Asian Wide (W) or Fullwidth (F) range.
    package static func isWide(_ value: UInt32) -> Bool {
        if value < wideRanges[0].lowerBound { return false }
        var lo = 0
        var hi = wideRanges.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let r = wideRanges[mid]
            if value < r.lowerBound { hi = mid - 1 }
            else if value > r.upperBound { lo = mid + 1 }
            else { return true }
        }
        return false
    }

    /// East Asian Wide and Fullwidth ranges (compact, from EastAsianWidth.txt), sorted.
    /// Emoji are covered separately by `isEmojiPresentation`.
    package static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,   // Hangul Jamo initial consonants
        0x2329...0x232A,   // angle brackets
        0x2E80...0x303E,   // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,   // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed CJK, CJK compatibility
        0x3400...0x4DBF,   // CJK Extension A
        0x4E00...0x9FFF,   // CJK Unified Ideographs
        0xA000...0xA4CF,   // Yi syllables and radicals
        0xA960...0xA97F,   // Hangul Jamo Extended-A
        0xAC00...0xD7A3,   // Hangul syllables
        0xF900...0xFAFF,   // CJK Compatibility Ideographs
        0xFE10...0xFE19,   // vertical forms
        0xFE30...0xFE6F,   // CJK compatibility forms, small form variants
        0xFF00...0xFF60,   // fullwidth ASCII variants
        0xFFE0...0xFFE6,   // fullwidth signs
        0x16FE0...0x16FE4, // ideographic symbols
        0x17000...0x18CFF, // Tangut, Khitan
        0x1AFF0...0x1B2FF, // Kana extended and supplement, Nushu
        0x1F200...0x1F2FF, // enclosed ideographic supplement
        0x20000...0x2FFFD, // CJK Extensions B-F, compatibility supplement
        0x30000...0x3FFFD, // CJK Extensions G-H
    ]
}
