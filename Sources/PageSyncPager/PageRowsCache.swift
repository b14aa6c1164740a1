/// The laid-out rows of what the screen shows last, kept until what they were made from changes:
/// the page (or the help), the width, and wrap or chop.
struct PageRowsCache: Sendable {
    /// What rows were laid out from.
    struct Source: Equatable, Sendable {
        var key: PageKey?
        var help: Bool
        var width: Int
        var wrap: Bool
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

    /// The rows of the page `key` (not the help) at `width`/`wrap`, if those are what is held.
    func pageRows(key: PageKey, width: Int, wrap: Bool) -> [LayoutRow]? {
        rows(for: Source(key: key, help: false, width: width, wrap: wrap))
    }
}
