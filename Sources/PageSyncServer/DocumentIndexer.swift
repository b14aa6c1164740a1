import PageSyncCore
import PageSyncMarkdown

/// What indexing a document found: its pages, its id, the title its front matter gives, and
/// what to tell the operator about how it was split.
struct DocumentScan: Sendable {
    /// The pages' byte ranges.
    var index: PageIndex
    /// A hash of the content and its pagination (see ``Document/id``).
    var id: String
    /// The front matter's `title:` (see ``FrontMatterTitle``).
    var title: String?
    /// One line for the log, once: why the document is one page and what would split it, or
    /// how a markdown document too large to parse was split instead.
    var advice: String?
    /// The speaker notes its markdown comments hold (see ``MarkdownNotes``).
    var notes: PageNotes = .none
    /// The pages' text without the notes, when ``index`` counts in it rather than in the file
    /// (a markdown document with notes).
    var audience: [UInt8]? = nil
}

/// Indexes a document fed in chunks, in order, by its ``Pagination``.
///
/// A markdown document (``Pagination/markdown``, or ``Pagination/headings`` for a file named
/// `.md` or `.markdown`) is held whole, up to ``MarkdownPagination/maxBytes``, and split by
/// ``MarkdownPagination`` once all of it is here; a larger one is streamed and split at `---`
/// lines, and the advice says so. Everything else streams through ``PageIndexer`` and holds only
/// page offsets. Plain text split at form feeds is also scanned for man-page sections (its first
/// ``adviceScanBytes``), to name the `--split` that would split it should it be one page.
struct DocumentIndexer {
    /// How much of a document the advice looks at (8 MiB).
    static let adviceScanBytes = 8 << 20
    /// A document of one page this long (in lines) gets advice even without headings.
    static let adviceMinimumLines = 100
    /// The page length the advice suggests for `lines:N`.
    static let adviceLinesPerPage = 60

    private let pagination: Pagination
    private let markdownMode: MarkdownPagination.Mode?
    /// The markdown document so far, while it fits.
    private var whole: [UInt8]? = nil
    private var streaming: PageIndexer
    private var sections: ManSectionScanner?
    private var scanned = 0
    private var size = 0
    private var hash = FNV1a()
    private var tooLarge = false
    /// For a markdown file streamed unparsed: whether its notes comments are page text.
    private var notesProbe: NotesCommentProbe?

    /// An indexer for a document named `path` (nil: the built-in guide).
    init(pagination: Pagination, path: String?) {
        self.pagination = pagination
        let markdown = path.map(Pagination.isMarkdown(path:)) ?? false
        switch pagination {
        case .markdown: markdownMode = .structure
        case .headings where markdown: markdownMode = .headings
        default: markdownMode = nil
        }
        if markdownMode != nil { whole = [] }
        if markdown { notesProbe = NotesCommentProbe() }
        streaming = PageIndexer(pagination: pagination)
        if pagination == .formFeed { sections = ManSectionScanner() }
    }

    /// Feeds the next chunk.
    mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        hash.add(chunk)
        size += chunk.count
        if whole != nil {
            if size <= MarkdownPagination.maxBytes {
                whole!.append(contentsOf: chunk)
                return
            }
            // Too large to parse: stream from here on, from the start.
            tooLarge = true
            whole!.withUnsafeBytes { streaming.consume($0) }
            notesProbe?.consume(whole!)
            whole = nil
        }
        streaming.consume(chunk)
        notesProbe?.consume(chunk)
        if sections != nil, scanned < Self.adviceScanBytes {
            let part = UnsafeRawBufferPointer(rebasing: chunk[..<min(chunk.count, Self.adviceScanBytes - scanned)])
            _ = sections!.consume(part)
            scanned += part.count
        }
    }

    /// Ends the document and returns what was found. Call once.
    mutating func finish() -> DocumentScan {
        hash.add(UInt64(truncatingIfNeeded: size))
        hash.add(pagination.description.utf8)
        if let bytes = whole, let mode = markdownMode {
            let split = MarkdownPagination.split(bytes, mode: mode)
            let title = split.frontMatter.flatMap { FrontMatterTitle.title(bytes[$0]) }
            var advice: String?
            if split.pages.count == 1 {
                let lines = LineStarts(bytes[split.pages[0]]).count
                if lines >= Self.adviceMinimumLines {
                    advice = "no top-level break or heading, so one page of \(lines) lines; "
                        + Self.linesAdvice(lines: lines)
                }
            }
            guard !split.notes.isEmpty else {
                return DocumentScan(index: PageIndex(ranges: split.pages).countingLines(in: bytes), id: hash.hex, title: title, advice: advice)
            }
            // Notes are no page's text: the pages are served from the text without them, and the
            // id hashes only that (and the front matter), so editing notes alone changes no id.
            let separated = MarkdownNotes.separate(bytes, split: split)
            var audienceHash = FNV1a()
            if let front = split.frontMatter { audienceHash.add(bytes[front]) }
            for page in separated.pages {
                audienceHash.add(UInt64(page.count))
                audienceHash.add(separated.audience[page])
            }
            audienceHash.add(pagination.description.utf8)
            if let line = separated.unterminatedLine {
                advice = [advice, "the notes comment at line \(line) has no -->: everything after it is notes"]
                    .compactMap { $0 }.joined(separator: "; ")
            }
            return DocumentScan(index: PageIndex(ranges: separated.pages).countingLines(in: separated.audience), id: audienceHash.hex, title: title,
                                advice: advice, notes: PageNotes(pages: separated.notes), audience: separated.audience)
        }
        let index = streaming.finish()
        var advice: String?
        if tooLarge {
            advice = "larger than \(MarkdownPagination.maxBytes >> 20) MiB, the most read whole to find its structure: "
                + "split at --- lines instead (--split separator:--- says so)"
        } else if var sections, index.count == 1 {
            _ = sections.finish()
            let complete = scanned == size
            if sections.headingCount >= 2 {
                advice = "no form feed, so one page; --split headings (split: headings in a config file) would make "
                    + "\(sections.headingCount) pages at its man-page section headings"
            } else if sections.lineCount >= Self.adviceMinimumLines {
                advice = "no form feed, so one page of \(complete ? "" : "over ")\(sections.lineCount) lines; "
                    + Self.linesAdvice(lines: complete ? sections.lineCount : nil)
            }
        }
        if notesProbe?.found == true {
            advice = [advice, "its <!-- notes: --> comments are page text here, seen by everyone: split it as markdown, "
                + "or keep its notes in a notes file"].compactMap { $0 }.joined(separator: "; ")
        }
        return DocumentScan(index: index, id: hash.hex, title: nil, advice: advice)
    }

    private static func linesAdvice(lines: Int?) -> String {
        let n = adviceLinesPerPage
        let pages = lines.map { " would make \(($0 + n - 1) / n) pages" } ?? " would split it every \(n) lines"
        return "--split lines:\(n) (split: lines:\(n) in a config file)" + pages
    }

    /// Indexes a whole document held in memory.
    static func scan(_ bytes: [UInt8], pagination: Pagination, path: String?) -> DocumentScan {
        var indexer = DocumentIndexer(pagination: pagination, path: path)
        bytes.withUnsafeBytes { indexer.consume($0) }
        return indexer.finish()
    }
}

/// The `title:` of a markdown document's YAML front matter, as the room's title: one line of at
/// most ``maxLength`` characters, control characters and runs of spaces made single spaces.
enum FrontMatterTitle {
    /// The longest title kept, in characters (a longer one is cut).
    static let maxLength = 80

    /// The title in `frontMatter` (its `---` lines included), or nil when it has none, or is not YAML.
    static func title(_ frontMatter: ArraySlice<UInt8>) -> String? {
        var lines = frontMatter.split(separator: 0x0A, omittingEmptySubsequences: false)
        if !lines.isEmpty { lines.removeFirst() }  // the opening ---
        while let last = lines.last, last.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { lines.removeLast() }
        if !lines.isEmpty { lines.removeLast() }  // the closing --- or ...
        let yaml = Array(lines.joined(separator: [0x0A]))
        let root = try? yaml.withUnsafeBytes { bytes throws(YAMLConfigError) in try LibYAMLParser.parse(bytes) }
        guard case .mapping(let entries)? = root,
              case .scalar(let text, _)? = entries.first(where: { $0.key == "title" })?.value else { return nil }
        var out = ""
        var space = false
        for c in text {
            let blank = c.isWhitespace || c.unicodeScalars.allSatisfy { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            if blank { space = !out.isEmpty; continue }
            if space { out.append(" "); space = false }
            out.append(c)
        }
        guard !out.isEmpty else { return nil }
        return out.count > maxLength ? String(out.prefix(maxLength - 1)) + "…" : out
    }
}
