/// How the room's marked lines look on screen: in reverse video across the whole row with
/// colour, or behind a `>` gutter without it (`NO_COLOR`, `TERM=dumb`), where every row of the
/// page then starts with two columns, `> ` on marked rows and blanks on the others.
package enum MarkHighlight {
    /// The gutter's width in columns.
    package static let gutterWidth = 2

    /// The text to write for `row`, laid out in `width` columns.
    package static func row(_ row: LayoutRow, marked: Bool, gutter: Bool, width: Int, colors: ColorPolicy) -> String {
        if gutter { return (marked ? "> " : "  ") + row.text }
        guard marked, colors == .full else { return row.text }
        // Reverse video held through the row's own resets, padded to the edge: a bar.
        let text = row.text.replacing("\u{1B}[0m", with: "\u{1B}[0;7m").replacing("\u{1B}[m", with: "\u{1B}[0;7m")
        return "\u{1B}[7m" + text + String(repeating: " ", count: max(0, width - row.width)) + "\u{1B}[0m"
    }
}
