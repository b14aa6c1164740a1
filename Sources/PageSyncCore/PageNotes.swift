/// The speaker notes of a document, page by page: what `NOTES` serves to those with control,
/// never part of a page's text. A markdown document carries them in comments (see
/// `MarkdownNotes` in PageSyncMarkdown); any other document may have a notes file beside it,
/// split into pages the same way as the document (``init(file:ranges:pageCount:)``).
public struct PageNotes: Equatable, Sendable {
    /// The largest notes file read (8 MiB, as a markdown document read whole); a larger one is ignored.
    public static let maxFileBytes = 8 << 20

    private var pages: [[UInt8]]
    /// Set when a notes file has another number of pages than its document: one line for the log.
    public private(set) var mismatch: String?

    /// No notes.
    public static let none = PageNotes(pages: [])

    /// The notes of each page in order (empty: none); pages past the end have none.
    public init(pages: [[UInt8]]) {
        self.pages = pages
    }

    /// The notes in a notes file: `bytes` cut into pages at `ranges` (as the document's
    /// pagination cuts it), each trimmed of blank lines at its ends, for a document of `pageCount`
    /// pages. Extra pages are dropped and a document page without a notes page has none; either
    /// way ``mismatch`` says so.
    public init(file bytes: [UInt8], ranges: [Range<Int>], pageCount: Int) {
        pages = ranges.prefix(pageCount).map { Self.trimmingBlankLines(bytes[$0]) }
        if ranges.count > pageCount {
            mismatch = "the notes file has \(ranges.count) pages, the document \(pageCount): "
                + "the notes of pages \(pageCount + 1)-\(ranges.count) are ignored"
        } else if ranges.count < pageCount {
            mismatch = "the notes file has \(ranges.count) pages, the document \(pageCount): "
                + "pages \(ranges.count + 1)-\(pageCount) have no notes"
        }
    }

    /// Whether no page has notes.
    public var isEmpty: Bool { pages.allSatisfy(\.isEmpty) }

    /// The notes of `page` (empty when it has none).
    public func notes(of page: PageNumber) -> [UInt8] {
        page.offset < pages.count ? pages[page.offset] : []
    }

    private static func trimmingBlankLines(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        func blank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
        var s = bytes
        // Drop whole blank lines at the start (keeping the first line's indentation), all blanks at the end.
        while let lf = s.firstIndex(of: 0x0A), s[s.startIndex..<lf].allSatisfy(blank) { s = s[(lf + 1)...] }
        if s.allSatisfy(blank) { return [] }
        while let last = s.last, blank(last) { s = s.dropLast() }
        return Array(s)
    }
}
