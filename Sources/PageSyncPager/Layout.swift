/// One screen row produced by ``Layout``.
public struct LayoutRow: Equatable, Sendable {
    /// What to write for the row: sanitized text that takes at most the layout width in
    /// columns. When any SGR style is active in the row, the text starts by re-applying
    /// the styles carried over from earlier rows and ends with `ESC [ 0 m`, so a row never
    /// leaks a style into the next one or into the status line.
    public var text: String
    /// The columns the row takes (0...width).
    public var width: Int
    /// The index of the document line this row shows (part of).
    public var line: Int
    /// Whether this is the first row of its line (false for wrapped continuation rows).
    public var isLineStart: Bool
    /// Chopped lines: whether the line goes on past the right edge (the row ends with `>`).
    public var cutRight: Bool
    /// Chopped lines scrolled sideways: whether the line has text left of the screen (the row starts with `<`).
    public var cutLeft: Bool

    /// A row.
    public init(text: String, width: Int, line: Int, isLineStart: Bool, cutRight: Bool = false, cutLeft: Bool = false) {
        self.text = text
        self.width = width
        self.line = line
        self.isLineStart = isLineStart
        self.cutRight = cutRight
        self.cutLeft = cutLeft
    }
}

/// Lays out the lines of a page into screen rows.
///
/// Lines are sanitized (see ``Sanitizer``). With `wrap` on, a line longer than the width
/// continues on the next row, breaking between grapheme clusters at a display-column
/// boundary (a wide character that does not fit moves whole to the next row). With `wrap`
/// off, a line is cut at the width ("chopped"), starting `shift` columns into it (scrolled
/// sideways): a line that goes on past the right edge ends with `>` in the last column, and
/// one with text left of the screen starts with `<` (a wide character cut by either edge shows
/// as spaces). Every line, even an empty one, takes at
/// least one row. SGR styles carry over from line to line as on a terminal, and are
/// re-applied at the start of each row that needs them.
public enum Layout {
    /// SGR styles remembered for re-applying at row starts (the newest ones win).
    static let maxCarriedStyles = 16

    /// All rows of `lines` at `width` columns (a width below 1 counts as 1). The lines whose
    /// indices are in `chopped` are chopped even when `wrap` is on (a markdown table), and only
    /// chopped lines are shifted.
    public static func rows(lines: some Sequence<some StringProtocol>, width: Int, wrap: Bool,
                            colors: ColorPolicy = .full, shift: Int = 0, chopped: Set<Int> = []) -> [LayoutRow] {
        let width = max(1, width)
        var rows: [LayoutRow] = []
        var carried: [String] = []  // styles active since the last reset

        for (index, line) in lines.enumerated() {
            if !wrap || chopped.contains(index) {
                rows.append(choppedRow(Sanitizer.pieces(line, colors: colors), line: index, width: width,
                                       shift: max(0, shift), carried: &carried))
                continue
            }
            var text = carried.joined()
            var styled = !carried.isEmpty
            var used = 0
            var isStart = true
            var chopped = false

            func finishRow() {
                if styled { text += "\u{1B}[0m" }
                rows.append(LayoutRow(text: text, width: used, line: index, isLineStart: isStart))
                text = carried.joined()
                styled = !carried.isEmpty
                used = 0
                isStart = false
            }

            for piece in Sanitizer.pieces(line, colors: colors) {
                switch piece {
                case .sgr(let seq):
                    carry(seq, into: &carried)
                    text += seq
                    styled = true
                case .glyph(var glyph, var w):
                    if w > width {  // a wide character on a 1-column screen
                        glyph = String(repeating: "?", count: width); w = width
                    }
                    if used + w > width {
                        if !wrap { chopped = true; continue }
                        finishRow()
                    }
                    if chopped { continue }
                    text += glyph
                    used += w
                }
            }
            finishRow()
        }
        return rows
    }

    /// Keeps `seq` among the styles a continued row starts with: a reset clears them, and at
    /// most `maxCarriedStyles` are kept.
    private static func carry(_ seq: String, into carried: inout [String]) {
        if isReset(seq) { carried.removeAll(); return }
        carried.append(seq)
        if carried.count > maxCarriedStyles { carried.removeFirst() }
    }

    /// One chopped line: columns `shift ..< shift + width` of it, with `<` and `>` marking text
    /// cut off on either side.
    static func choppedRow(_ pieces: [DisplayPiece], line: Int, width: Int, shift: Int, carried: inout [String]) -> LayoutRow {
        let total = pieces.reduce(0) { if case .glyph(_, let w) = $1 { $0 + w } else { $0 } }
        let cutLeft = shift > 0 && total > 0
        let leftMarker = cutLeft && width > 1 ? 1 : 0
        let cutRight = total - shift > width - leftMarker
        let available = max(0, width - leftMarker - (cutRight ? 1 : 0))
        var text = (leftMarker == 1 ? "<" : "") + carried.joined()
        var styled = !carried.isEmpty
        var used = 0
        var column = 0  // the line's column of the next glyph
        for piece in pieces {
            switch piece {
            case .sgr(let seq):
                carry(seq, into: &carried)
                text += seq
                styled = true
            case .glyph(let glyph, let w):
                defer { column += w }
                let start = column - shift
                if start + w <= 0 || start >= available { continue }  // off screen
                if start < 0 || start + w > available {  // a wide character cut by an edge
                    let shown = min(start + w, available) - max(start, 0)
                    text += String(repeating: " ", count: shown)
                    used += shown
                    continue
                }
                text += glyph
                used += w
            }
        }
        if cutRight {
            if styled { text += "\u{1B}[0m" }
            text += ">"
            styled = false
            used = available + 1
        }
        if styled { text += "\u{1B}[0m" }
        return LayoutRow(text: text, width: leftMarker + used, line: line, isLineStart: true,
                         cutRight: cutRight, cutLeft: cutLeft)
    }

    /// The rows a screen of `height` rows shows when scrolled down by `offset` rows
    /// (`offset` is clamped with ``maxOffset(rowCount:height:)``).
    public static func visible(_ rows: [LayoutRow], offset: Int, height: Int) -> ArraySlice<LayoutRow> {
        let height = max(0, height)
        let start = min(max(0, offset), maxOffset(rowCount: rows.count, height: height))
        return rows[start..<min(rows.count, start + height)]
    }

    /// The largest useful scroll offset: the one that shows the last row at the bottom
    /// of the screen (0 when everything fits).
    public static func maxOffset(rowCount: Int, height: Int) -> Int {
        max(0, rowCount - max(0, height))
    }

    /// The index of the first row that shows line `line` (nil if no row does).
    public static func firstRow(ofLine line: Int, in rows: [LayoutRow]) -> Int? {
        firstRow(atOrAfterLine: line, in: rows).flatMap { rows[$0].line == line ? $0 : nil }
    }

    /// The index of the first row that shows line `line` or a later one (nil if no row does).
    public static func firstRow(atOrAfterLine line: Int, in rows: [LayoutRow]) -> Int? {
        var lo = 0
        var hi = rows.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rows[mid].line < line { lo = mid + 1 } else { hi = mid }
        }
        return lo < rows.count ? lo : nil
    }

    /// Cuts `text` (plain, no control characters) to at most `width` columns, ending with
    /// "…" when something was cut. Never splits a grapheme cluster.
    public static func truncate(_ text: some StringProtocol, toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return String(text) }
        var out = ""
        var used = 0
        for c in text {
            let w = DisplayWidth.of(c)
            if used + w > width - 1 { break }
            out.append(c)
            used += w
        }
        return out + "…"
    }

    /// The end of `text` (plain, no control characters) that takes at most `width` columns:
    /// the whole text when it fits. Never splits a grapheme cluster.
    public static func tail(_ text: some StringProtocol, toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return String(text) }
        var start = text.endIndex
        var used = 0
        while start > text.startIndex {
            let before = text.index(before: start)
            let w = DisplayWidth.of(text[before])
            if used + w > width { break }
            used += w
            start = before
        }
        return String(text[start...])
    }

    private static func isReset(_ sgr: String) -> Bool {
        // "ESC[m", "ESC[0m", "ESC[00;0m": every parameter zero or empty.
        let params = sgr.dropFirst(2).dropLast()
        return params.split(separator: ";", omittingEmptySubsequences: false)
            .allSatisfy { $0.allSatisfy { $0 == "0" } }
    }
}
