/// The lines a page shows once search and filter are applied: matches marked (see
/// ``SearchHighlighter``), and with a filter (`&`) only the lines it shows (see ``LineFilter``).
public struct FilteredLines: Equatable, Sendable {
    /// The lines to lay out.
    public var lines: [String]
    /// For each of ``lines``, its index in the page (increasing).
    public var origin: [Int]
}

/// Searching within a page's lines: pure functions over the lines and a ``SearchPattern``.
public enum PageSearch {
    /// The index of the first line after `start` (forward) or before it (backward) that matches
    /// `pattern`, skipping lines a `filter` hides. `start` may be -1 (forward from the top) or
    /// `lines.count` (backward from the bottom). Nil when there is none.
    public static func find(_ pattern: SearchPattern, in lines: [String], from start: Int, forward: Bool,
                            filter: LineFilter? = nil) -> Int? {
        let candidates: StrideTo<Int> = forward
            ? stride(from: max(-1, start) + 1, to: lines.count, by: 1)
            : stride(from: min(lines.count, start) - 1, to: -1, by: -1)
        for i in candidates {
            if let filter, !filter.shows(lines[i]) { continue }
            if pattern.matches(lines[i]) { return i }
        }
        return nil
    }

    /// The lines to show: with `filter`, only those it shows; with `search`, its matches marked.
    public static func display(_ lines: [String], search: SearchPattern?, filter: LineFilter?,
                               colors: ColorPolicy = .full) -> FilteredLines {
        var out = FilteredLines(lines: [], origin: [])
        out.lines.reserveCapacity(lines.count)
        out.origin.reserveCapacity(lines.count)
        for (i, line) in lines.enumerated() {
            if let filter, !filter.shows(line) { continue }
            out.lines.append(search.map { SearchHighlighter.highlight(line, $0, colors: colors) } ?? line)
            out.origin.append(i)
        }
        return out
    }

    /// The page a search goes on to when the current page has no further match: the next one
    /// forward, the previous one backward; nil at the document's end (a search never wraps around).
    public static func nextPage(after page: Int, pageCount: Int, forward: Bool) -> Int? {
        let target = forward ? page + 1 : page - 1
        return (1...max(1, pageCount)).contains(target) ? target : nil
    }
}

/// A search that goes on to other pages: it waits for `page`'s text, then looks there from the
/// top (forward) or the bottom (backward).
public struct PendingSearch: Equatable, Sendable {
    /// The page being searched next.
    public var page: Int
    /// The direction.
    public var forward: Bool
    /// The page the search started from (for the "not found" message).
    public var startPage: Int
    /// Where the search started, to go back to when it finds nothing.
    package var origin: SearchOrigin
}

/// Where a search that goes on to other pages started: the view, and on that page the line at
/// the top of the screen and the match on screen (if any).
package struct SearchOrigin: Equatable, Sendable {
    package var mode: FollowMode
    package var key: PageKey?
    package var topLine: Int?
    package var match: Int?
}
