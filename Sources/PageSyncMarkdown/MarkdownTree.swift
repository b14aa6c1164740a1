/// A markdown document as a tree of blocks, as a CommonMark parser reads it (see ``CmarkParser``).
/// A plain value: ``MarkdownRenderer`` turns it into terminal lines.
public indirect enum MarkdownBlock: Equatable, Sendable {
    /// `#` ... `######` (or a setext heading), level 1 to 6.
    case heading(level: Int, [MarkdownInline])
    /// A paragraph.
    case paragraph([MarkdownInline])
    /// `>`: a block quote.
    case blockQuote([MarkdownBlock])
    /// A bullet list (`ordered` false) or a numbered one counting from `start`; each item is blocks.
    case list(ordered: Bool, start: Int, tight: Bool, items: [[MarkdownBlock]])
    /// A fenced or indented code block: its info string (the language) and its text, line by line.
    case code(info: String, lines: [String])
    /// Raw HTML, shown as it is (sanitized like any text).
    case html(lines: [String])
    /// `---`, `***`: a rule.
    case thematicBreak
    /// A GitHub table: one alignment per column, the header row, then the body rows; each cell is inlines.
    case table(alignments: [MarkdownAlignment], header: [[MarkdownInline]], rows: [[[MarkdownInline]]])
}

/// How a table column is aligned (`:--`, `:-:`, `--:`).
public enum MarkdownAlignment: Equatable, Sendable {
    /// No colon, or a colon on the left.
    case left
    /// Colons on both sides.
    case center
    /// A colon on the right.
    case right
}

/// Text within a block.
public indirect enum MarkdownInline: Equatable, Sendable {
    /// Plain text.
    case text(String)
    /// `` `code` ``.
    case code(String)
    /// A line end within a paragraph.
    case softBreak
    /// A hard line break (two spaces or `\` at the end of a line).
    case lineBreak
    /// `*emphasis*`.
    case emphasis([MarkdownInline])
    /// `**strong**`.
    case strong([MarkdownInline])
    /// `~~strikethrough~~` (GitHub).
    case strikethrough([MarkdownInline])
    /// `[text](url)`.
    case link(url: String, [MarkdownInline])
    /// `![alt](url)`.
    case image(url: String, [MarkdownInline])
    /// Inline HTML, shown as it is.
    case html(String)
}
