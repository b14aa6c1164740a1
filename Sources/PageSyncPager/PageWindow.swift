/// One piece of a long page as the server sent it for `TEXT <n> FROM <from>`: whole lines from
/// byte `from` up to byte `next`, except that with `split` the last line goes on in the next piece.
package struct PagePiece: Equatable, Sendable {
    /// The byte offset in the page the piece starts at (always the start of a line, or the
    /// middle of a line the previous piece ended inside with `split`).
    package var from: Int
    /// The byte offset the next piece starts at (the page's size after the last piece).
    package var next: Int
    /// Whether the last line goes on at the start of the next piece.
    package var split: Bool
    /// The piece's lines, as sent.
    package var lines: [String]

    /// Each stored property as given (the memberwise initializer, visible to the package's tests).
    package init(from: Int, next: Int, split: Bool, lines: [String]) {
        self.from = from
        self.next = next
        self.split = split
        self.lines = lines
    }
}

/// Where a piece is and which lines it holds, kept after its text is let go: the line index
/// across pieces.
package struct PieceIndexEntry: Equatable, Sendable {
    /// The piece's first byte in the page.
    package var from: Int
    /// The next piece's first byte.
    package var next: Int
    /// The page line (0-based) the piece's first line is, or is part of.
    package var firstLine: Int
    /// The number of lines in the piece (a split last line counts).
    package var lineCount: Int
    /// Whether the last line goes on in the next piece.
    package var split: Bool

    /// The page line the next piece starts with.
    package var nextFirstLine: Int { firstLine + lineCount - (split ? 1 : 0) }
}

/// A page too long to hold whole, read in pieces (`TEXT <n> FROM <offset>`) as the reader
/// scrolls: the pure rules of which piece to ask for, which to let go, and which page line each
/// held line is.
///
/// - Pieces are only ever asked for at byte offsets the server gave (0, or a piece's `next`), so
///   every piece starts where a line starts (or goes on) and lines are never guessed from bytes.
/// - The held pieces are contiguous. A piece adjacent to them is added at that end; any other
///   replaces them. Beyond ``byteBudget`` the pieces at the far end are let go (at least two are
///   kept, so a reader between two pieces never makes them chase each other).
/// - The index remembers every piece seen from the page's start on (a few numbers each), so the
///   piece before the held ones can be asked for by its offset, line numbers are exact, and the
///   line count is known once the last piece was seen.
/// - One request at a time. Near an edge of what is held (within ``margin(screen:)`` lines of it)
///   the piece beyond is asked for; with a ``Goal`` (the end or the start of the page) the pieces
///   on the way are asked for one after another, skipping those the index already knows.
package struct PageWindow: Equatable, Sendable {
    /// Where the reader asked to go.
    package enum Goal: Equatable, Sendable { case start, end }

    /// The most text held, in bytes (two pieces are kept even when they are larger).
    package static let byteBudget = 3 << 20

    /// The page's size in bytes.
    package let pageBytes: Int
    /// The pieces held, contiguous, in page order.
    package private(set) var held: [PagePiece] = []
    /// Every piece seen, contiguous from the page's start.
    package private(set) var index: [PieceIndexEntry] = []
    /// The offset asked for and not answered yet.
    package private(set) var requested: Int?
    /// Where the reader is going, until the piece there is held.
    package var goal: Goal?
    /// Bumped whenever the held lines change and are to be shown: not while reading on to the
    /// end (the pieces on the way are never laid out), but once the end is there.
    package private(set) var revision = 0

    /// A window over a page of `pageBytes` bytes with nothing held yet.
    package init(pageBytes: Int) { self.pageBytes = max(0, pageBytes) }

    /// Whether the page's first line is held.
    package var atStart: Bool { held.first?.from == 0 }
    /// Whether the page's last line is held.
    package var atEnd: Bool { held.last.map { $0.next >= pageBytes } ?? false }
    /// The bytes held.
    package var heldBytes: Int { held.reduce(0) { $0 + ($1.next - $1.from) } }
    /// The page line (0-based) of the first held line.
    package var firstLine: Int { held.first.flatMap { entry(from: $0.from)?.firstLine } ?? 0 }
    /// The page's number of lines, once the last piece has been seen.
    package var lineCount: Int? {
        guard let last = index.last, last.next >= pageBytes else { return nil }
        return last.firstLine + last.lineCount
    }

    /// How many lines ``lines()`` has.
    package var heldLineCount: Int {
        held.enumerated().reduce(0) { $0 + $1.element.lines.count - ($1.element.split && $1.offset < held.count - 1 ? 1 : 0) }
    }

    /// The held lines in page order, a line split between two held pieces joined again.
    package func lines() -> [String] {
        var out: [String] = []
        var carry: String?
        out.reserveCapacity(heldLineCount)
        for (i, piece) in held.enumerated() {
            var lines = piece.lines
            if let c = carry {
                if lines.isEmpty { lines = [c] } else { lines[0] = c + lines[0] }
                carry = nil
            }
            if piece.split, i < held.count - 1, let last = lines.popLast() { carry = last }
            out += lines
        }
        if let carry { out.append(carry) }
        return out
    }

    /// How close (in lines) to an edge of what is held the reader may come before the piece
    /// beyond is asked for: two screens.
    package static func margin(screen: Int) -> Int { max(1, screen) * 2 }

    /// The offset to ask for next, given the held lines from `top` to `bottom` (0-based, within
    /// ``lines()``) are on a screen of `screen` rows; nil when nothing is needed or a request
    /// is already out.
    package func nextRequest(top: Int, bottom: Int, screen: Int) -> Int? {
        guard requested == nil else { return nil }
        guard let first = held.first, let last = held.last else { return 0 }
        switch goal {
        case .end:
            if atEnd { return nil }
            // Skip what the index knows: straight to the last piece when it knows the end, else to
            // where the unknown begins.
            if let known = index.last, known.from >= last.next { return known.next < pageBytes ? known.next : known.from }
            return last.next
        case .start:
            return atStart ? nil : 0
        case nil:
            let margin = Self.margin(screen: screen)
            let count = heldLineCount
            if !atEnd, bottom >= count - 1 - margin { return last.next }
            if !atStart, top <= margin, let before = index.first(where: { $0.next == first.from }) { return before.from }
            return nil
        }
    }

    /// Notes that `offset` was asked for.
    package mutating func markRequested(_ offset: Int) { requested = offset }

    /// Forgets the request out (the connection closed, or it was refused).
    package mutating func forgetRequest() { requested = nil }

    /// Takes a piece the server sent. Returns false (and changes nothing but the request) when
    /// the piece does not fit what is known: an offset nobody gave, or a page of another size.
    @discardableResult
    package mutating func receive(_ piece: PagePiece, pageBytes size: Int) -> Bool {
        if requested == piece.from { requested = nil }
        guard size == pageBytes, piece.next > piece.from || piece.next == pageBytes, piece.next <= pageBytes else { return false }
        // Where the piece is in the page's lines: at 0, or right after a piece the index knows.
        let firstLine: Int
        if piece.from == 0 { firstLine = 0 }
        else if let before = index.first(where: { $0.next == piece.from }) { firstLine = before.nextFirstLine }
        else { return false }
        let entry = PieceIndexEntry(from: piece.from, next: piece.next, firstLine: firstLine,
                                    lineCount: piece.lines.count, split: piece.split)
        if let i = index.firstIndex(where: { $0.from == piece.from }) { index[i] = entry }
        else if index.last.map({ $0.next == piece.from }) ?? (piece.from == 0) { index.append(entry) }
        else { return false }

        if let last = held.last, last.next == piece.from {
            held.append(piece)
            while heldBytes > Self.byteBudget, held.count > 2 { held.removeFirst() }
        } else if let first = held.first, piece.next == first.from {
            held.insert(piece, at: 0)
            while heldBytes > Self.byteBudget, held.count > 2 { held.removeLast() }
        } else if !held.contains(where: { $0.from == piece.from }) {
            held = [piece]
        } else {
            return true  // already held
        }
        if goal == .end && atEnd { goal = nil }
        if goal == .start && atStart { goal = nil }
        if goal != .end { revision += 1 }
        return true
    }

    /// Gives up on the goal (a piece could not be had): what is held is shown as it is.
    package mutating func stop() {
        requested = nil
        goal = nil
        revision += 1
    }

    /// How far through the page the held pieces reach, 0...100 (the progress of reading on to the end).
    package var reachedPercent: Int { pageBytes == 0 ? 100 : min(100, (held.last?.next ?? 0) * 100 / pageBytes) }

    /// The index entry of the piece starting at `from`.
    private func entry(from: Int) -> PieceIndexEntry? { index.first { $0.from == from } }

    /// How far through the page (0...100) the end of held line `line` is, by bytes when the line
    /// count is not known yet.
    package func percent(throughLine line: Int) -> Int {
        if let total = lineCount, total > 0 { return min(100, (firstLine + line + 1) * 100 / total) }
        guard pageBytes > 0 else { return 100 }
        var remaining = line
        for piece in held {
            let n = max(1, piece.lines.count)
            if remaining < n {
                let byte = piece.from + (piece.next - piece.from) * (remaining + 1) / n
                return min(100, byte * 100 / pageBytes)
            }
            remaining -= n - (piece.split ? 1 : 0)
        }
        return min(100, (held.last?.next ?? 0) * 100 / pageBytes)
    }
}

/// The long page on screen: which page, the window over it, and why reading it stopped, if it did.
package struct LongPage: Sendable {
    /// The page.
    package var key: PageKey
    /// Its pieces.
    package var window: PageWindow
    /// Set when a piece could not be had: the page is cut where the held pieces end, and this says why.
    package var failure: String?
}
