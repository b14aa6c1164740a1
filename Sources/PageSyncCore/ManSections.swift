#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The man-page heading rule, one line at a time, fed byte by byte (a line may come in pieces).
///
/// A line is a section heading as `man` prints one (`NAME`, `SEE ALSO`, `SHELL BUILTIN COMMANDS`)
/// when, once nroff's overstrike (`X\bX` bold, `_\bX` underline) and SGR sequences are taken out:
/// - it starts at column 0 with a capital letter `A`-`Z`;
/// - it holds no lowercase ASCII letter and no tab, only capitals, digits, spaces,
///   `- _ / & , . ' ( ) : +` and non-ASCII characters (capitals of other scripts);
/// - it has at least two letters and at most ``maxLength`` characters.
/// ``ManSectionScanner`` adds that a heading follows a blank line or opens the document.
///
/// Most lines are decided by their first byte or two (man's text is indented, prose has
/// lowercase), so feeding stops early: ``decided`` says when the rest of the line cannot matter.
public struct ManHeadingProbe: Equatable, Sendable {
    /// What a line is, for splitting.
    public enum Kind: Equatable, Sendable {
        /// Empty, or only spaces, tabs and a CR.
        case blank
        /// A section heading.
        case heading
        /// Anything else.
        case text
    }

    /// The longest heading, in characters.
    public static let maxLength = 60

    private enum State: Equatable, Sendable { case start, blank, candidate, escape, csi, text }
    private var state = State.start
    private var length = 0
    private var letters = 0
    /// The first character shown (after overstrike): a heading starts with a capital.
    private var first: UInt8?
    /// Whether the last character counted was a letter (a backspace takes it back).
    private var lastWasLetter = false

    /// A probe at the start of a line.
    public init() {}

    /// Whether the line is known to be ``Kind/text`` already (the rest of it can be skipped).
    public var decided: Bool { state == .text }

    /// Takes the next byte of the line (not its LF).
    public mutating func feed(_ byte: UInt8) {
        switch state {
        case .text:
            return
        case .start:
            switch byte {
            case 0x20, 0x09, 0x0D: state = .blank
            case 0x1B: state = .escape
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), 0xC0...0xFF:
                state = .candidate
                candidate(byte)
            default: state = .text
            }
        case .blank:
            if byte != 0x20 && byte != 0x09 && byte != 0x0D { state = .text }
        case .escape:
            state = byte == UInt8(ascii: "[") ? .csi : .text
        case .csi:
            if byte == UInt8(ascii: "m") { state = .candidate }
            else if !(0x30...0x3F).contains(byte) { state = .text }
        case .candidate:
            candidate(byte)
        }
    }

    private mutating func candidate(_ byte: UInt8) {
        switch byte {
        case 0x08:  // overstrike: the next character is shown in place of the last one
            if length > 0 {
                length -= 1
                if lastWasLetter { letters -= 1 }
                if length == 0 { first = nil }
            }
            lastWasLetter = false
        case 0x1B:
            state = .escape
        case 0x0D:
            break
        case UInt8(ascii: "A")...UInt8(ascii: "Z"):
            count(byte, letter: true)
        case UInt8(ascii: "0")...UInt8(ascii: "9"), 0x20, UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"),
             UInt8(ascii: "&"), UInt8(ascii: ","), UInt8(ascii: "."), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: ":"), UInt8(ascii: "+"):
            count(byte, letter: false)
        case 0x80...0xBF:
            break  // a character's continuation byte: counted with its lead byte
        case 0xC0...0xFF:
            count(byte, letter: true)
        default:  // lowercase ASCII, a tab, any other punctuation or control
            state = .text
        }
    }

    private mutating func count(_ byte: UInt8, letter: Bool) {
        if length == 0 { first = byte }
        length += 1
        if letter { letters += 1 }
        lastWasLetter = letter
        if length > Self.maxLength { state = .text }
    }

    /// What the line fed so far is, taken as a whole line.
    public var kind: Kind {
        switch state {
        case .start, .blank: .blank
        case .candidate:
            letters >= 2 && first.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 >= 0xC0 } == true
                ? .heading : .text
        case .escape, .csi, .text: .text
        }
    }

    /// The kind of a whole line (without its LF).
    public static func kind(of line: some Sequence<UInt8>) -> Kind {
        var probe = ManHeadingProbe()
        for byte in line {
            probe.feed(byte)
            if probe.decided { break }
        }
        return probe.kind
    }
}

/// Finds where man-page sections start in a document fed in chunks: a ``ManHeadingProbe``
/// heading that follows a blank line (or is the document's first line) starts a section. The
/// first section also holds whatever comes before it (man's header line), so a section starts
/// a page only from the second heading on. Counts lines too. Uses memchr to skip what the rule
/// has already decided about.
public struct ManSectionScanner: Sendable {
    /// Lines seen (a last line without an LF counts once ``finish()`` is called).
    public private(set) var lineCount = 0
    /// Headings seen that follow a blank line (or open the document).
    public private(set) var headingCount = 0

    private var probe = ManHeadingProbe()
    private var position = 0
    private var lineStart = 0
    private var previousBlank = true
    private var pendingBytes = false

    /// A scanner at the start of a document.
    public init() {}

    /// Feeds the next chunk; returns the offsets (from the document's start) of the lines that
    /// start a new page, in order.
    public mutating func consume(_ chunk: UnsafeRawBufferPointer) -> [Int] {
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return [] }
        var starts: [Int] = []
        let n = chunk.count
        var i = 0
        while i < n {
            // Feed the line's bytes until the probe has decided or the line ends.
            while i < n && !probe.decided {
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                if b == 0x0A { break }
                probe.feed(b)
                pendingBytes = true
                i += 1
            }
            guard i < n else { break }
            let lf: Int
            if base.load(fromByteOffset: i, as: UInt8.self) == 0x0A {
                lf = i
            } else if let hit = memchr(base + i, 0x0A, n - i) {
                lf = UnsafeRawPointer(hit) - base
            } else {
                break  // the line goes on in the next chunk
            }
            if let start = endLine() { starts.append(start) }
            i = lf + 1
            lineStart = position + i
        }
        position += n
        return starts
    }

    /// Ends the document: a last line without an LF is judged too. Returns its offset when it
    /// starts a new page.
    public mutating func finish() -> Int? {
        guard pendingBytes || probe.decided else { return nil }
        return endLine()
    }

    private mutating func endLine() -> Int? {
        let kind = probe.kind
        probe = ManHeadingProbe()
        pendingBytes = false
        lineCount += 1
        defer { previousBlank = kind == .blank }
        guard kind == .heading, previousBlank else { return nil }
        headingCount += 1
        return headingCount > 1 ? lineStart : nil
    }
}
