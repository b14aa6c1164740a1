/// The row of dots that shows where a page is in the document: `○ ● ○ ○`.
///
/// One dot per page, separated by single spaces, `●` for the current page. When that
/// does not fit in `maxWidth` columns, it condenses to a window of pages around the
/// current one, always keeping the first and last page, with `…` for the pages left
/// out: `○ … ○ ● ○ … ○`. A gap of exactly one page shows that page's dot instead of `…`
/// (same width). Every dot and `…` counts as one column.
public enum PageIndicator {
    /// The indicator for `page` (1-based, clamped into `1...pageCount`) of `pageCount` pages,
    /// at most `maxWidth` columns wide. Always contains exactly one `●` when `maxWidth >= 1`;
    /// empty when `maxWidth < 1`.
    public static func render(page: Int, pageCount: Int, maxWidth: Int) -> String {
        let count = max(1, pageCount)
        let current = min(max(1, page), count)
        guard maxWidth >= 1 else { return "" }
        if 2 * count - 1 <= maxWidth {
            return (1...count).map { $0 == current ? "●" : "○" }.joined(separator: " ")
        }
        var window = min(count, (maxWidth + 1) / 2)
        while window >= 1 {
            let tokens = condensed(current: current, count: count, window: window)
            if 2 * tokens.count - 1 <= maxWidth { return tokens.joined(separator: " ") }
            window -= 1
        }
        return "●"
    }

    private static func condensed(current: Int, count: Int, window: Int) -> [String] {
        var start = max(1, current - (window - 1) / 2)
        let end = min(count, start + window - 1)
        start = max(1, end - window + 1)
        var shown = [1]
        if start > 1 { shown.append(start) }
        if end > start { shown.append(contentsOf: (start + 1)...end) }
        if end < count { shown.append(count) }
        var tokens: [String] = []
        var previous = 0
        for p in shown where p != previous {
            if previous != 0 && p - previous == 2 { tokens.append(p - 1 == current ? "●" : "○") }
            else if previous != 0 && p - previous > 2 { tokens.append("…") }
            tokens.append(p == current ? "●" : "○")
            previous = p
        }
        return tokens
    }
}
