/// How a markdown document is split into pages: the pure decision, from the document's bytes (or
/// its outline) to the byte ranges of its pages. This is the one place where a markdown page's
/// text is decided: the daemon serves each page's range of the file as it is.
///
/// - **Front matter.** A block of YAML between a first line `---` and the next line `---` or
///   `...` (as presenterm, Jekyll and reveal-md read it) is metadata, never a page; it must
///   hold a `key:` line at column 0, so a deck that opens with a `---` rule is not mistaken for it.
/// - **Structure** (``Mode/structure``, `split: markdown`): top-level thematic breaks (`---`,
///   `***`, `___`) and presenterm's `<!-- end_slide -->` end a page and belong to none. A `---`
///   in fenced code, in a list or a quote is not top-level and splits nothing; a `---` under a
///   line of text is that text's (setext) heading. With no such break, the document splits at
///   its headings, as with ``Mode/headings``.
/// - **Headings** (``Mode/headings``, `split: headings`): each top-level heading of one level
///   starts a page: `#` when there are two or more, else `##` (when there is a single `#` or
///   none), else a lone `#`. What comes before the first one (a title, an introduction) is a page
///   of its own unless it is blank.
/// - Pages holding only blank lines at the start and the end of the document are dropped; in the
///   middle they are kept (a blank slide on purpose). A document that splits nowhere is one page.
public enum MarkdownPagination {
    /// The largest document the daemon reads whole to split this way (8 MiB). A larger markdown
    /// file is streamed and split at `---` lines instead (see `Pagination.markdown`).
    public static let maxBytes = 8 << 20

    /// What to split at.
    public enum Mode: Equatable, Sendable {
        /// Breaks and `<!-- end_slide -->`; headings when there are none.
        case structure
        /// Top-level headings only.
        case headings
    }

    /// Where a document was cut.
    public enum Cut: Equatable, Sendable {
        /// At `count` top-level breaks (thematic breaks and `<!-- end_slide -->`).
        case breaks(count: Int)
        /// At the top-level headings of `level`.
        case headings(level: Int)
        /// Nowhere: one page.
        case none
    }

    /// A document split into pages.
    public struct Split: Equatable, Sendable {
        /// The front matter's bytes, its `---` lines included (nil: none).
        public var frontMatter: Range<Int>?
        /// Each page's bytes, in order (at least one).
        public var pages: [Range<Int>]
        /// Where it was cut.
        public var cut: Cut
        /// The notes comments on the pages, in order (see ``MarkdownNotes``); empty when there are none.
        public var notes: [NotesBlock]

        /// A split with every field given.
        public init(frontMatter: Range<Int>?, pages: [Range<Int>], cut: Cut, notes: [NotesBlock] = []) {
            self.frontMatter = frontMatter
            self.pages = pages
            self.cut = cut
            self.notes = notes
        }
    }

    /// A notes comment: its whole lines' bytes in the file, and the line it begins on (from 1;
    /// counted in the body given to ``split(outline:lines:body:offset:mode:frontMatter:)``, in the
    /// file from ``split(_:mode:)``).
    public struct NotesBlock: Equatable, Sendable {
        /// The bytes of its lines, their line ends included.
        public var bytes: Range<Int>
        /// The line in the file it begins on.
        public var line: Int

        /// A block with every field given.
        public init(bytes: Range<Int>, line: Int) {
            self.bytes = bytes
            self.line = line
        }
    }

    /// Splits `bytes`, parsing them with cmark-gfm.
    public static func split(_ bytes: [UInt8], mode: Mode) -> Split {
        let front = frontMatter(bytes)
        let bodyStart = front?.upperBound ?? 0
        let body = bytes[bodyStart...]
        let outline = CmarkParser.outline(body) ?? []
        var split = split(outline: outline, lines: LineStarts(body), body: body, offset: bodyStart, mode: mode, frontMatter: front)
        let frontLines = bytes[0..<bodyStart].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        for i in split.notes.indices { split.notes[i].line += frontLines }
        return split
    }

    /// The decision itself, from the outline of the document's body (after its front matter) whose
    /// bytes are `body`, starting at `offset` in the file.
    public static func split(outline: [MarkdownOutlineBlock], lines: LineStarts, body: some Collection<UInt8>,
                             offset: Int, mode: Mode, frontMatter: Range<Int>?) -> Split {
        let breaks = mode == .structure ? outline.filter(isBreak) : []
        var cuts: [(end: Int, resume: Int)] = []
        let cut: Cut
        if !breaks.isEmpty {
            cuts = breaks.map { (lines.start(ofLine: $0.startLine), lines.start(ofLine: $0.endLine + 1)) }
            cut = .breaks(count: breaks.count)
        } else if let level = headingLevel(outline) {
            cuts = outline.filter { $0.kind == .heading(level: level) }.map {
                let start = lines.start(ofLine: $0.startLine)
                return (start, start)
            }
            cut = .headings(level: level)
        } else {
            cut = .none
        }
        var ranges: [Range<Int>] = []
        var start = 0
        for c in cuts where c.end >= start {
            ranges.append(start..<c.end)
            start = max(c.end, c.resume)
        }
        ranges.append(start..<lines.byteCount)
        // Blank pages at either end go; a document with nothing but blanks is one page.
        let bytes = Array(body)
        func blank(_ r: Range<Int>) -> Bool { bytes[r].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } }
        while ranges.count > 1, let first = ranges.first, blank(first) { ranges.removeFirst() }
        while ranges.count > 1, let last = ranges.last, blank(last) { ranges.removeLast() }
        let pages = ranges.map { ($0.lowerBound + offset)..<($0.upperBound + offset) }
        let notes = outline.filter { $0.kind == .notes }.map {
            NotesBlock(bytes: (lines.start(ofLine: $0.startLine) + offset)..<(lines.start(ofLine: $0.endLine + 1) + offset),
                       line: $0.startLine)
        }
        return Split(frontMatter: frontMatter, pages: pages, cut: ranges.count > 1 ? cut : .none, notes: notes)
    }

    /// Whether a top-level block ends a page in ``Mode/structure``: a thematic break, or an HTML
    /// block that is exactly presenterm's `<!-- end_slide -->` (spaces inside and around allowed).
    public static func isBreak(_ block: MarkdownOutlineBlock) -> Bool {
        switch block.kind {
        case .thematicBreak: return true
        case .html(let text): return isEndSlide(text)
        case .heading, .notes, .other: return false
        }
    }

    /// `<!-- end_slide -->`, with any spaces, tabs and line ends around and inside the comment.
    public static func isEndSlide(_ html: String) -> Bool {
        var s = Substring(html)
        func trim(_ t: Substring) -> Substring {
            var t = t
            while let f = t.first, f.isWhitespace { t = t.dropFirst() }
            while let l = t.last, l.isWhitespace { t = t.dropLast() }
            return t
        }
        s = trim(s)
        guard s.hasPrefix("<!--"), s.hasSuffix("-->"), s.count >= 7 else { return false }
        return trim(s.dropFirst(4).dropLast(3)) == "end_slide"
    }

    /// The heading level the document splits at (see ``Mode/headings``), or nil.
    public static func headingLevel(_ outline: [MarkdownOutlineBlock]) -> Int? {
        let ones = outline.filter { $0.kind == .heading(level: 1) }.count
        let twos = outline.filter { $0.kind == .heading(level: 2) }.count
        if ones >= 2 { return 1 }
        if twos >= 1 { return 2 }
        if ones == 1 { return 1 }
        return nil
    }

    /// The front matter at the start of `bytes`: from a first line `---` to the next line `---`
    /// or `...` (trailing spaces and a CR allowed on both), holding at least one `key:` line at
    /// column 0. Nil when there is none.
    public static func frontMatter(_ bytes: [UInt8]) -> Range<Int>? {
        var lineStart = 0
        var lineNumber = 0
        var sawKey = false
        while lineStart < bytes.count {
            let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[lineStart..<end]
            while let last = line.last, last == 0x20 || last == 0x09 || last == 0x0D { line = line.dropLast() }
            let next = min(bytes.count, end + 1)
            if lineNumber == 0 {
                guard line.elementsEqual("---".utf8) else { return nil }
            } else if line.elementsEqual("---".utf8) || line.elementsEqual("...".utf8) {
                return sawKey ? 0..<next : nil
            } else if isKeyLine(line) {
                sawKey = true
            }
            lineNumber += 1
            lineStart = next
        }
        return nil
    }

    /// `name:` at column 0 followed by a space, a tab or the end of the line (a YAML mapping key).
    private static func isKeyLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard let first = line.first, first == UInt8(ascii: "_") || (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z"),
              let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let name = line[line.startIndex..<colon]
        guard name.allSatisfy({ b in
            b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z"))
        }) else { return false }
        let after = line.index(after: colon)
        return after == line.endIndex || line[after] == 0x20 || line[after] == 0x09
    }
}
