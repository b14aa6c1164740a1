/// One top-level block of a markdown document as ``CmarkParser/outline(_:)`` finds it: what it
/// is, as far as splitting into pages cares, and the lines it spans.
public struct MarkdownOutlineBlock: Equatable, Sendable {
    /// The HTML blocks longer than this (in bytes) are outlined as ``Kind/other``: a page break
    /// written as a comment is short.
    public static let maxHTMLLength = 128

    /// What a block is.
    public enum Kind: Equatable, Sendable {
        /// `---`, `***`, `___` (a top-level rule).
        case thematicBreak
        /// An ATX (`#`) or setext (underlined) heading of `level` 1 to 6.
        case heading(level: Int)
        /// An HTML block (a comment among them) of at most ``maxHTMLLength`` bytes: its text.
        case html(String)
        /// An HTML comment holding speaker notes (`<!-- notes: ...` or `<!-- speaker_note: ...`),
        /// whatever its length: never part of a page's text (see ``MarkdownNotes``).
        case notes
        /// Anything else: paragraphs, lists, quotes, code, tables, longer HTML.
        case other
    }

    /// What the block is.
    public var kind: Kind
    /// Its first line (1-based, as cmark numbers lines).
    public var startLine: Int
    /// Its last line (1-based).
    public var endLine: Int

    /// A block with every field given.
    public init(kind: Kind, startLine: Int, endLine: Int) {
        self.kind = kind
        self.startLine = startLine
        self.endLine = endLine
    }
}

/// Where each line of a text starts, counting lines as CommonMark (and cmark) do: a line ends at
/// LF, CR LF or a lone CR.
public struct LineStarts: Equatable, Sendable {
    /// The byte offset of each line's first byte, in order; the first is 0. A text that ends
    /// with a line ending has no empty line after it.
    public let offsets: [Int]
    /// The text's length in bytes.
    public let byteCount: Int

    /// The line starts of `bytes`.
    public init(_ bytes: some Collection<UInt8>) {
        var offsets = [0]
        var i = 0
        var previousCR = false
        for b in bytes {
            if b == 0x0A || previousCR {
                let start = b == 0x0A ? i + 1 : i
                if offsets.last != start { offsets.append(start) }
            }
            previousCR = b == 0x0D
            i += 1
        }
        if previousCR { offsets.append(i) }
        if offsets.count > 1, offsets.last == i { offsets.removeLast() }
        self.offsets = offsets
        byteCount = i
    }

    /// The offset where 1-based `line` starts; the text's end for a line past the last.
    public func start(ofLine line: Int) -> Int {
        line >= 1 && line <= offsets.count ? offsets[line - 1] : (line < 1 ? 0 : byteCount)
    }

    /// The number of lines.
    public var count: Int { offsets.count }
}
