/// The laid-out rows of what the screen shows last, kept until what they were made from changes:
/// the page (or the help), the width, and wrap or chop (a new search or filter forgets them).
struct PageRowsCache: Sendable {
    /// What rows were laid out from.
    struct Source: Equatable, Sendable {
        var key: PageKey?
        var help: Bool
        var width: Int
        var wrap: Bool
        /// How many columns chopped lines are scrolled sideways (0 when lines wrap).
        var shift: Int = 0
        /// Which lines of a long page were held (``PageWindow/revision``); 0 for a page held whole.
        var revision: Int = 0
    }

    private var source: Source?
    private var rows: [LayoutRow] = []

    /// The rows for `source`, if held.
    func rows(for source: Source) -> [LayoutRow]? { self.source == source ? rows : nil }

    /// Remembers `rows` as laid out from `source`.
    mutating func store(_ rows: [LayoutRow], for source: Source) {
        self.source = source
        self.rows = rows
    }

    /// Forgets the rows (what is shown of the same page changed: a search's marks, a filter).
    mutating func forget() { source = nil }

}
