/// The row of dots that shows where a page is in the document: `○ ● ○ ○`.
///
/// One dot per page, separated by single spaces, `●` for the current page. When that does not
/// fit in `maxWidth` columns, it condenses to as many tokens as fit (at least five), always
/// keeping the first and last page, with `…` for the pages left out: `● ○ ○ … ○`,
/// `○ … ● … ○`, `○ … ○ ○ ●`. For a given page count and width the row always has the same
/// width, whatever the page, so a status line does not jump as pages turn. Under five tokens'
/// room (9 columns) a condensed row is the bare `●`. Every dot and `…` counts as one column.
public enum PageIndicator {
    /// The indicator for `page` (1-based, clamped into `1...pageCount`) of `pageCount` pages,
    /// at most `maxWidth` columns wide. Always contains exactly one `●` when `maxWidth >= 1`;
    /// empty when `maxWidth < 1`.
    public static func render(page: Int, pageCount: Int, maxWidth: Int) -> String {
        let count = max(1, pageCount)
        let current = min(max(1, page), count)
        guard maxWidth >= 1 else { return "" }
        let tokens = (maxWidth + 1) / 2
        if count <= tokens {
            return (1...count).map { $0 == current ? "●" : "○" }.joined(separator: " ")
        }
        guard tokens >= 5 else { return "●" }
        return condensed(current: current, count: count, tokens: tokens).joined(separator: " ")
    }

    /// Exactly `tokens` (>= 5, < count) tokens: the first page, the last, a window around the
    /// current one, and `…` where pages are left out.
    private static func condensed(current: Int, count: Int, tokens: Int) -> [String] {
        func dots(_ range: ClosedRange<Int>) -> [String] { range.map { $0 == current ? "●" : "○" } }
        let first = current == 1 ? "●" : "○"
        let last = current == count ? "●" : "○"
        if current <= tokens - 2 { return dots(1...(tokens - 2)) + ["…", last] }
        if current >= count - (tokens - 3) { return [first, "…"] + dots((count - (tokens - 3))...count) }
        let window = tokens - 4
        let start = current - (window - 1) / 2
        return [first, "…"] + dots(start...(start + window - 1)) + ["…", last]
    }
}
