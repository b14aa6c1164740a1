/// The window of screen rows a page shows: a scroll offset over `rowCount` laid-out rows on a
/// screen of `height` content rows. Every change keeps the offset in `0...maxOffset`, where the
/// last row sits at the bottom of the screen (0 when the page fits).
package struct Viewport: Equatable, Sendable {
    /// How many rows the page is scrolled down.
    package private(set) var offset = 0

    /// The largest useful offset for `rowCount` rows on `height` rows.
    package static func maxOffset(rowCount: Int, height: Int) -> Int { max(0, rowCount - max(0, height)) }

    /// Whether the first row is on screen.
    package var atTop: Bool { offset == 0 }

    /// Whether the last of `rowCount` rows is on screen.
    package func atBottom(rowCount: Int, height: Int) -> Bool { offset >= Self.maxOffset(rowCount: rowCount, height: height) }

    /// Moves by `delta` rows (down when positive), clamped.
    package mutating func scroll(by delta: Int, rowCount: Int, height: Int) {
        set(offset + delta, rowCount: rowCount, height: height)
    }

    /// Moves to `row` at the top of the screen, clamped.
    package mutating func set(_ row: Int, rowCount: Int, height: Int) {
        offset = min(max(0, row), Self.maxOffset(rowCount: rowCount, height: height))
    }

    /// Back to the first row.
    package mutating func reset() { offset = 0 }

    /// Every property at its initial value.
    package init() {}
}

/// Where the screen is within a page, for the status line: `lines 11-33/41 80%`.
public struct PagePosition: Equatable, Sendable {
    /// The first document line on screen (1-based).
    public var firstLine: Int
    /// The last document line on screen (1-based).
    public var lastLine: Int
    /// The page's number of lines.
    public var lineCount: Int
    /// Whether rows below the screen are not shown yet.
    public var moreBelow: Bool
    /// Whether ``lineCount`` is the page's line count (false: a long page not yet read to its
    /// end, where it is only the lines seen so far and the percentage is by bytes).
    public var countKnown: Bool
    /// How far through the page the bottom of the screen is by bytes, when the line count is not known.
    public var bytePercent: Int?
    /// Under a filter (`&`): how many of the page's lines match, of how many.
    public var filtered: FilterCount?

    /// A position with every part given.
    public init(firstLine: Int, lastLine: Int, lineCount: Int, moreBelow: Bool, countKnown: Bool = true,
                bytePercent: Int? = nil) {
        self.firstLine = firstLine
        self.lastLine = lastLine
        self.lineCount = lineCount
        self.moreBelow = moreBelow
        self.countKnown = countKnown
        self.bytePercent = bytePercent
    }

    /// The position of `height` rows from `offset` in `rows` (nil when there are no rows).
    public static func of(_ rows: [LayoutRow], offset: Int, height: Int) -> PagePosition? {
        guard let lastRow = rows.last else { return nil }
        let visible = Layout.visible(rows, offset: offset, height: height)
        guard let first = visible.first, let last = visible.last else { return nil }
        return PagePosition(firstLine: first.line + 1, lastLine: last.line + 1, lineCount: lastRow.line + 1,
                            moreBelow: visible.endIndex < rows.count)
    }

    /// How far through the page the bottom of the screen is, 0...100.
    public var percent: Int {
        if !countKnown, let bytePercent { return bytePercent }
        return lineCount == 0 ? 100 : min(100, lastLine * 100 / lineCount)
    }

    /// `lines 11-33/41 80%`; `lines 20001-20023/? 12%` while a long page's line count is not known;
    /// `47 of 6,678 lines match` under a filter.
    public var text: String {
        if let filtered {
            return "\(Self.grouped(filtered.matching)) of \(Self.grouped(filtered.total)) line\(filtered.total == 1 ? "" : "s") match"
        }
        return "lines \(firstLine)-\(lastLine)/\(countKnown ? String(lineCount) : "?") \(percent)%"
    }

    /// ``text`` when room is short: `80%`, or `47/6,678 match` under a filter.
    public var shortText: String {
        filtered.map { "\(Self.grouped($0.matching))/\(Self.grouped($0.total)) match" } ?? "\(percent)%"
    }

    /// `6,678`: thousands set apart by commas.
    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }
}

/// How many of a page's lines a filter (`&`) shows, of how many.
public struct FilterCount: Equatable, Sendable {
    /// The lines that show.
    public var matching: Int
    /// The page's lines.
    public var total: Int

    /// A count with both numbers given.
    public init(matching: Int, total: Int) {
        self.matching = matching
        self.total = total
    }
}
