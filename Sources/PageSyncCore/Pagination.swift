#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// How a document is split into pages.
///
/// In every mode: empty pages in the middle are kept; an empty final segment (the file
/// ends with a break) is dropped; an empty file is one empty page; a file without a
/// trailing newline works.
public enum Pagination: Equatable, Sendable, CustomStringConvertible {
    /// Pages are the bytes between form feeds (U+000C). One `"\n"` or `"\r\n"` right after
    /// a form feed belongs to the break, not to the next page.
    case formFeed
    /// A line equal to the string (after dropping its LF, a CR and trailing spaces/tabs)
    /// separates pages and belongs to no page. Trailing spaces/tabs of the separator
    /// itself are ignored too.
    case separator(String)
    /// Every n lines (n >= 1) make a page.
    case lines(Int)
    /// Markdown's own structure: top-level thematic breaks (`---`, `***`, `___`) and
    /// `<!-- end_slide -->` end pages, or, with neither, the top-level headings do (see
    /// `MarkdownPagination` in PageSyncMarkdown); YAML front matter is metadata, not a page. The
    /// daemon reads such a document whole to parse it, up to a limit; ``PageIndexer``, which
    /// streams, splits it at `---` lines as `separator:---` does (the daemon's fallback for a
    /// larger file).
    case markdown
    /// At headings: a markdown document's top-level headings (`#`, or `##` under a single `#`);
    /// in any other document, man-page section headings (see ``ManHeadingProbe``), streamed.
    case headings

    /// Parses `"formfeed"`, `"markdown"`, `"headings"`, `"separator:<line>"` or `"lines:<n>"`
    /// (n >= 1, ASCII digits). The keywords are case-insensitive; the separator line is taken
    /// verbatim and must hold a non-blank character and no CR or LF. Returns nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "formfeed": self = .formFeed; return
        case "markdown": self = .markdown; return
        case "headings": self = .headings; return
        default: break
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let keyword = text[..<colon].lowercased()
        let value = text[text.index(after: colon)...]
        switch keyword {
        case "separator":
            guard value.contains(where: { $0 != " " && $0 != "\t" }),
                  !value.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return nil }
            self = .separator(String(value))
        case "lines":
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let n = Int(value), n >= 1 else { return nil }
            self = .lines(n)
        default:
            return nil
        }
    }

    /// How a document is split when its room names no `split`: markdown (`.md`, `.markdown`,
    /// any case) by its structure (``markdown``); anything else at form feeds.
    public static func defaultFor(path: String) -> Pagination {
        isMarkdown(path: path) ? .markdown : .formFeed
    }

    /// Whether the file at `path` is markdown by its name: `.md` or `.markdown`, any case.
    public static func isMarkdown(path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let ext = name[name.index(after: dot)...].lowercased()
        return ext == "md" || ext == "markdown"
    }

    /// The text `init(parsing:)` accepts: `"formfeed"`, `"markdown"`, `"headings"`,
    /// `"separator:<line>"`, `"lines:<n>"`.
    public var description: String {
        switch self {
        case .formFeed: return "formfeed"
        case .markdown: return "markdown"
        case .headings: return "headings"
        case .separator(let s): return "separator:\(s)"
        case .lines(let n): return "lines:\(n)"
        }
    }
}

/// Byte ranges of every page of a document. Memory is proportional to the page count
/// (two `Int` per page); the content itself is never stored.
public struct PageIndex: Equatable, Sendable {
    private var starts: [Int]
    private var ends: [Int]
    /// How many line feeds come before each page's first byte in the file (empty: not counted).
    private var startLines: [Int] = []

    /// Creates an index from page byte ranges, in order. No ranges means one empty page `0..<0`.
    public init(ranges: some Sequence<Range<Int>>) {
        var starts: [Int] = []
        var ends: [Int] = []
        for r in ranges {
            starts.append(r.lowerBound)
            ends.append(r.upperBound)
        }
        if starts.isEmpty {
            starts = [0]
            ends = [0]
        }
        self.starts = starts
        self.ends = ends
    }

    init(starts: [Int], ends: [Int], startLines: [Int] = []) {
        precondition(!starts.isEmpty && starts.count == ends.count)
        precondition(startLines.isEmpty || startLines.count == starts.count)
        self.starts = starts
        self.ends = ends
        self.startLines = startLines
    }

    /// The file line (from 1) on which `page` starts: what `TEXT`'s `firstline=` says, so a
    /// pager can number a page's lines as the file does. Nil when not counted.
    public func firstLine(of page: PageNumber) -> Int? {
        guard page.number <= count, !startLines.isEmpty else { return nil }
        return startLines[page.offset] + 1
    }

    /// This index with its pages' first lines counted in `bytes`, the text its ranges are of.
    public func countingLines(in bytes: some Collection<UInt8>) -> PageIndex {
        var copy = self
        var lines: [Int] = []
        lines.reserveCapacity(count)
        let counted: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            var offset = 0
            var feeds = 0
            for start in starts {
                let end = min(max(start, offset), buffer.count)
                feeds += LineFeeds.count(in: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[offset..<end])))
                offset = end
                lines.append(feeds)
            }
        }
        if counted == nil { return countingLines(in: Array(bytes)) }
        copy.startLines = lines
        return copy
    }

    /// The number of pages; always >= 1.
    public var count: Int { starts.count }

    /// The byte range of `page` in the file. Precondition: `page.number <= count`.
    public func byteRange(of page: PageNumber) -> Range<Int> {
        precondition(page.number <= count, "page \(page) beyond page count \(count)")
        return starts[page.offset]..<ends[page.offset]
    }

    /// The byte ranges of all pages, in order.
    public var ranges: [Range<Int>] {
        (0..<count).map { starts[$0]..<ends[$0] }
    }
}

/// Counting line feeds at memory speed.
enum LineFeeds {
    /// The LF bytes in `bytes`.
    static func count(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var n = 0
        var i = 0
        while i < bytes.count, let hit = memchr(base + i, 0x0A, bytes.count - i) {
            n += 1
            i = UnsafeRawPointer(hit) - base + 1
        }
        return n
    }
}

/// Incremental indexer: feed the file in chunks of any size, in order, then call
/// `finish()` once. Page boundaries and CRLF may span chunk boundaries; the result is
/// the same however the file is chunked. Uses memchr, so it runs at memory speed.
///
/// It streams, so it splits ``Pagination/markdown`` at `---` lines as `separator:---` does, and
/// ``Pagination/headings`` at man-page section headings (``ManSectionScanner``): the daemon
/// parses markdown whole elsewhere when the file is small enough.
public struct PageIndexer: Sendable {
    private enum FormFeedSkip: Sendable { case none, afterFF, afterFFCR }
    /// Progress of matching the current line against the separator.
    private enum SeparatorMatch: Sendable { case prefix(Int), blanks, carriageReturn, failed }
    private enum Mode: Sendable { case formFeed, separator, lines, headings }

    private let pagination: Mode
    private let separator: [UInt8]
    private let linesPerPage: Int

    private var starts: [Int] = []
    private var ends: [Int] = []
    private var startLines: [Int] = []
    /// Absolute offset of the first byte of the next chunk.
    private var position = 0
    /// Absolute offset where the current page starts.
    private var pageStart = 0
    /// The line feeds before ``pageStart``.
    private var pageStartLine = 0
    /// The line feeds counted so far, and up to which absolute offset.
    private var feeds = 0
    private var feedsOffset = 0

    // formFeed
    private var skip = FormFeedSkip.none
    // separator
    private var lineStart = 0
    private var match = SeparatorMatch.prefix(0)
    // lines
    private var linesInPage = 0
    // headings
    private var sections = ManSectionScanner()

    /// Creates an indexer for `pagination`. A `.lines` count below 1 is treated as 1.
    public init(pagination: Pagination) {
        var separator: [UInt8] = []
        var linesPerPage = 1
        switch pagination {
        case .separator(let s):
            separator = Array(s.utf8)
            while let last = separator.last, last == 0x20 || last == 0x09 { separator.removeLast() }
            self.pagination = .separator
        case .markdown:
            separator = Array("---".utf8)
            self.pagination = .separator
        case .lines(let n):
            linesPerPage = max(1, n)
            self.pagination = .lines
        case .formFeed:
            self.pagination = .formFeed
        case .headings:
            self.pagination = .headings
        }
        self.separator = separator
        self.linesPerPage = linesPerPage
    }

    /// Feeds the next chunk of the file.
    public mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return }
        switch pagination {
        case .formFeed: consumeFormFeed(base, chunk.count)
        case .separator: consumeSeparator(base, chunk.count)
        case .lines: consumeLines(base, chunk.count)
        case .headings: consumeHeadings(chunk)
        }
        _ = feedsBefore(position + chunk.count, in: chunk)  // the rest of the chunk
        position += chunk.count
    }

    /// Ends the file and returns its index. Call once, after the last `consume`.
    public mutating func finish() -> PageIndex {
        var finalStart = pageStart
        switch pagination {
        case .formFeed:
            break
        case .separator:
            if lineStart < position && lineMatches() {
                // The file ends with a separator line without an LF.
                addPage(pageStart, lineStart)
                finalStart = position
            }
        case .lines:
            break
        case .headings:
            if let start = sections.finish() {
                addPage(pageStart, start)
                finalStart = start
            }
        }
        if finalStart < position || starts.isEmpty {
            addPage(finalStart, position)
        }
        return PageIndex(starts: starts, ends: ends, startLines: startLines)
    }

    /// Indexes a whole document held in memory.
    public static func index(_ bytes: some Collection<UInt8>, pagination: Pagination) -> PageIndex {
        var indexer = PageIndexer(pagination: pagination)
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            indexer.consume(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes { indexer.consume($0) }
        }
        return indexer.finish()
    }

    // MARK: - Modes

    private mutating func addPage(_ start: Int, _ end: Int) {
        starts.append(start)
        ends.append(end)
        startLines.append(start == pageStart ? pageStartLine : feedsBefore(start, in: UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    /// The current page now starts at absolute offset `start`, in `chunk` (the one being consumed).
    private mutating func setPageStart(_ start: Int, in chunk: UnsafeRawBufferPointer) {
        pageStart = start
        pageStartLine = feedsBefore(start, in: chunk)
    }

    /// The line feeds before absolute offset `offset`, counting on through the chunk being
    /// consumed. Offsets only grow; one already counted past (a heading found at the start of its
    /// line, which began in an earlier chunk) has no line feed between it and the count.
    private mutating func feedsBefore(_ offset: Int, in chunk: UnsafeRawBufferPointer) -> Int {
        guard offset > feedsOffset else { return feeds }
        let chunkStart = position
        let from = feedsOffset - chunkStart, to = min(offset - chunkStart, chunk.count)
        if from >= 0, to > from {
            feeds += LineFeeds.count(in: UnsafeRawBufferPointer(rebasing: chunk[from..<to]))
            feedsOffset = chunkStart + to
        }
        return feeds
    }

    private mutating func consumeFormFeed(_ base: UnsafeRawPointer, _ n: Int) {
        var i = 0
        while i < n {
            switch skip {
            case .afterFF:
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                if b == 0x0A {
                    i += 1
                    setPageStart(position + i, in: UnsafeRawBufferPointer(start: base, count: n))
                    skip = .none
                } else if b == 0x0D {
                    i += 1
                    skip = .afterFFCR
                } else {
                    skip = .none
                }
            case .afterFFCR:
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                if b == 0x0A {
                    i += 1
                    setPageStart(position + i, in: UnsafeRawBufferPointer(start: base, count: n))
                }
                skip = .none
            case .none:
                guard let hit = memchr(base + i, 0x0C, n - i) else { return }
                let p = UnsafeRawPointer(hit) - base
                addPage(pageStart, position + p)
                i = p + 1
                setPageStart(position + i, in: UnsafeRawBufferPointer(start: base, count: n))
                skip = .afterFF
            }
        }
    }

    private mutating func consumeHeadings(_ chunk: UnsafeRawBufferPointer) {
        for start in sections.consume(chunk) {
            addPage(pageStart, start)
            setPageStart(start, in: chunk)
        }
    }

    private mutating func consumeLines(_ base: UnsafeRawPointer, _ n: Int) {
        var i = 0
        while i < n, let hit = memchr(base + i, 0x0A, n - i) {
            let p = UnsafeRawPointer(hit) - base
            i = p + 1
            linesInPage += 1
            if linesInPage == linesPerPage {
                addPage(pageStart, position + i)
                setPageStart(position + i, in: UnsafeRawBufferPointer(start: base, count: n))
                linesInPage = 0
            }
        }
    }

    private func lineMatches() -> Bool {
        switch match {
        case .prefix(let k): return k == separator.count
        case .blanks, .carriageReturn: return true
        case .failed: return false
        }
    }

    /// Advances the separator match over `base[from..<to]` (bytes of one line, no LF).
    private mutating func advanceMatch(_ base: UnsafeRawPointer, from: Int, to: Int) {
        var i = from
        while i < to {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            switch match {
            case .failed:
                return
            case .prefix(let k):
                if k < separator.count && b == separator[k] {
                    match = .prefix(k + 1)
                } else if k == separator.count && (b == 0x20 || b == 0x09) {
                    match = .blanks
                } else if k == separator.count && b == 0x0D {
                    match = .carriageReturn
                } else {
                    match = .failed
                }
            case .blanks:
                if b == 0x0D {
                    match = .carriageReturn
                } else if b != 0x20 && b != 0x09 {
                    match = .failed
                }
            case .carriageReturn:
                // Only an LF may follow the CR of a separator line.
                match = .failed
            }
            i += 1
        }
    }

    private mutating func consumeSeparator(_ base: UnsafeRawPointer, _ n: Int) {
        var i = 0
        while i < n {
            let hit = memchr(base + i, 0x0A, n - i)
            let lineEnd = hit.map { UnsafeRawPointer($0) - base } ?? n
            advanceMatch(base, from: i, to: lineEnd)
            guard hit != nil else { return }
            // A complete line: [lineStart, position + lineEnd], LF included.
            if lineMatches() {
                addPage(pageStart, lineStart)
                setPageStart(position + lineEnd + 1, in: UnsafeRawBufferPointer(start: base, count: n))
            }
            i = lineEnd + 1
            lineStart = position + i
            match = .prefix(0)
        }
    }
}
