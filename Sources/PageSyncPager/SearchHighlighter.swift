/// Marks the matches of a ``SearchPattern`` in a line, as less does: each match in reverse
/// video, from `ESC [ 7 m` to `ESC [ 0 m` followed by the document's own styles that are active
/// there (a full reset, so ``Layout`` never carries the mark on to later rows).
///
/// The result is the line sanitized (see ``Sanitizer``) with the marks added, so laying it out
/// again gives the same text and widths. The document's own styles stay; a match that spans a
/// style change stays marked. Under ``ColorPolicy/none`` (`TERM=dumb`) nothing is marked, as no
/// SGR sequence reaches such a terminal; the line comes back sanitized.
public enum SearchHighlighter {
    /// Turns reverse video on.
    public static let markOn = "\u{1B}[7m"
    /// Ends a mark (then the document's active styles are applied again).
    public static let markOff = "\u{1B}[0m"

    /// `line` with every non-empty match of `pattern` marked.
    public static func highlight(_ line: String, _ pattern: SearchPattern, colors: ColorPolicy = .full) -> String {
        let pieces = Sanitizer.pieces(line, colors: colors)
        var plain = ""
        for case .glyph(let g, _) in pieces { plain += g }
        let ranges = colors == .none ? [] : pattern.ranges(inPlain: plain)
        var out = ""
        var position = 0  // characters of plain text written so far
        var next = 0      // the next range to open or close
        var inside = false
        var active: [String] = []  // the document's styles since its last reset
        for piece in pieces {
            switch piece {
            case .sgr(let s):
                if isReset(s) { active.removeAll() } else { active.append(s) }
                out += s
                if inside { out += markOn }  // the document's reset must not end the mark
            case .glyph(let g, _):
                while !inside, next < ranges.count, ranges[next].upperBound <= position { next += 1 }
                if !inside, next < ranges.count, position + g.count > ranges[next].lowerBound {
                    out += markOn
                    inside = true
                }
                out += g
                position += g.count
                if inside, position >= ranges[next].upperBound {
                    out += markOff + active.joined()
                    inside = false
                    next += 1
                }
            }
        }
        if inside { out += markOff + active.joined() }
        return out
    }

    /// Whether an SGR sequence resets every style (`ESC[m`, `ESC[0m`, `ESC[00;0m`).
    static func isReset(_ sgr: String) -> Bool {
        sgr.dropFirst(2).dropLast().split(separator: ";", omittingEmptySubsequences: false)
            .allSatisfy { $0.allSatisfy { $0 == "0" } }
    }
}
