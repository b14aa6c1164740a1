/// Speaker notes in a markdown document: a top-level HTML comment that starts with `notes:` or
/// presenterm's `speaker_note:` holds the notes of the page it stands on. The notes are never
/// part of the page's text: ``separate(_:split:)`` takes them out, so what the audience is served
/// (TEXT, the document's id, a page's line numbers) never counts them.
///
/// ```
/// <!-- notes: Ask who has used tmux. -->
/// <!-- speaker_note: |
///   Two lines,
///   kept as lines.
/// -->
/// ```
///
/// A comment inside a list, a quote or a paragraph (inline HTML) is not notes: it stays text.
/// An unterminated notes comment runs, as HTML comments do in CommonMark, to the end of the
/// document: all of that is notes, so no note ever reaches the audience, and
/// ``Separated/unterminatedLine`` says where it began so the operator can be told.
public enum MarkdownNotes {
    /// The words a notes comment starts with.
    public static let keywords = ["notes:", "speaker_note:"]

    /// Whether an HTML block's text is a notes comment: `<!--`, blanks, then a keyword.
    public static func isNotes(_ html: String) -> Bool {
        var s = Substring(html)
        s = s.drop(while: \.isWhitespace)
        guard s.hasPrefix("<!--") else { return false }
        s = s.dropFirst(4).drop(while: \.isWhitespace)
        return keywords.contains { s.hasPrefix($0) }
    }

    /// A document's pages with the notes taken out.
    public struct Separated: Equatable, Sendable {
        /// The audience's text: every page's bytes without its notes, one page after the other.
        public var audience: [UInt8]
        /// Each page's bytes in ``audience``.
        public var pages: [Range<Int>]
        /// Each page's notes (empty: none), as many as there are pages.
        public var notes: [[UInt8]]
        /// The line (from 1, in the file) where a notes comment without `-->` begins, if any.
        public var unterminatedLine: Int?
    }

    /// Takes the notes out of the pages of `bytes` as `split` cut them. Several notes on one page
    /// are joined by a blank line.
    public static func separate(_ bytes: [UInt8], split: MarkdownPagination.Split) -> Separated {
        var audience: [UInt8] = []
        audience.reserveCapacity(bytes.count)
        var pages: [Range<Int>] = []
        var notes: [[UInt8]] = Array(repeating: [], count: split.pages.count)
        var unterminated: Int?
        var blocks = split.notes[...]
        for (i, page) in split.pages.enumerated() {
            let start = audience.count
            var at = page.lowerBound
            while let block = blocks.first, block.bytes.lowerBound < page.upperBound {
                blocks = blocks.dropFirst()
                guard block.bytes.lowerBound >= at else { continue }
                audience.append(contentsOf: bytes[at..<block.bytes.lowerBound])
                let end = min(block.bytes.upperBound, page.upperBound)
                let note = text(bytes[block.bytes.lowerBound..<end])
                if !note.terminated, unterminated == nil { unterminated = block.line }
                if !note.text.isEmpty {
                    if !notes[i].isEmpty { notes[i].append(contentsOf: [0x0A, 0x0A]) }
                    notes[i].append(contentsOf: note.text)
                }
                at = end
            }
            audience.append(contentsOf: bytes[at..<page.upperBound])
            pages.append(start..<audience.count)
        }
        return Separated(audience: audience, pages: pages, notes: notes, unterminatedLine: unterminated)
    }

    /// The notes in one notes comment's bytes: what follows the keyword up to the last `-->`
    /// (or the end, when there is none), trimmed; a YAML `|` alone on the first line is dropped,
    /// and the lines after the first lose their common indentation. CR before LF is dropped.
    public static func text(_ block: some Collection<UInt8>) -> (text: [UInt8], terminated: Bool) {
        var b = Array(block)
        guard let open = find(Array("<!--".utf8), in: b, from: 0) else { return ([], true) }
        var i = open + 4
        while i < b.count, isBlank(b[i]) || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
        for keyword in keywords where b[i...].starts(with: keyword.utf8) {
            i += keyword.utf8.count
            break
        }
        var end = b.count
        var terminated = false
        var search = i
        while let close = find(Array("-->".utf8), in: b, from: search) {
            end = close
            terminated = true
            search = close + 3
        }
        b = Array(b[i..<end])
        var lines = b.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            var line = line
            if line.last == 0x0D { line = line.dropLast() }
            return line
        }
        if let first = lines.first {
            let trimmed = first.drop(while: isBlank)
            lines[0] = trimmed.elementsEqual("|".utf8) || trimmed.elementsEqual("|-".utf8) ? [] : trimmed
        }
        let indent = lines.dropFirst().filter { !$0.allSatisfy(isBlank) }.map { $0.prefix(while: isBlank).count }.min() ?? 0
        for k in lines.indices.dropFirst() { lines[k] = lines[k].dropFirst(min(indent, lines[k].count)) }
        for k in lines.indices { while let l = lines[k].last, isBlank(l) { lines[k] = lines[k].dropLast() } }
        while let f = lines.first, f.isEmpty { lines.removeFirst() }
        while let l = lines.last, l.isEmpty { lines.removeLast() }
        return (Array(lines.joined(separator: [0x0A])), terminated)
    }

    private static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard needle.count <= bytes.count, from <= bytes.count - needle.count else { return nil }
        var i = from
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0], bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}

/// Looks for a notes comment (see ``MarkdownNotes/isNotes(_:)``) in a markdown document streamed
/// in chunks without being parsed (split at `---` lines or every n lines, or too large to read
/// whole): there its notes are page text, which the operator must be told.
public struct NotesCommentProbe: Sendable {
    /// How much of a chunk's end is kept to find a comment that spans two chunks.
    static let keep = 48
    private var tail: [UInt8] = []
    /// Whether a notes comment has been seen.
    public private(set) var found = false

    /// A probe that has seen nothing.
    public init() {}

    /// Feeds the next chunk.
    public mutating func consume(_ chunk: some Collection<UInt8>) {
        guard !found else { return }
        var bytes = tail
        bytes.append(contentsOf: chunk)
        var i = 0
        while i + 4 <= bytes.count {
            if bytes[i] == UInt8(ascii: "<"), bytes[(i + 1)..<(i + 4)].elementsEqual("!--".utf8),
               MarkdownNotes.isNotes(String(decoding: bytes[i..<min(bytes.count, i + Self.keep)], as: UTF8.self)) {
                found = true
                return
            }
            i += 1
        }
        tail = Array(bytes.suffix(Self.keep))
    }
}
