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

/// A search that goes on through the room's document, page after page, when the page on
/// screen has no further match. It never moves the view: pages are asked for (`TEXT <n>`) and
/// searched as they come, and the view goes to a match only when the reader chose to (`n`, `N`:
/// ``show``). A new search (`/`, `?`) only says where the first match is; the next `n` goes there.
/// It never wraps around, and stops at the document's end.
package struct DocumentSearch: Equatable, Sendable {
    /// The pattern as typed (a new pattern is a new search).
    package let pattern: String
    /// Forward (to the last page) or backward (to the first).
    package let forward: Bool
    /// The page on screen when it started (already searched).
    package let startPage: Int
    /// The document searched (`doc=`); a page from another one ends the search.
    package let doc: String
    /// Whether to show the match when found (`n`, `N`), or only say where it is (`/`, `?`).
    package let show: Bool
    /// The page to search next; nil when the search is over.
    package private(set) var next: Int?
    private let pageCount: Int

    /// What to do next.
    package enum Step: Equatable, Sendable {
        /// Search page `page` (ask for its text if it is not held).
        case search(page: Int)
        /// A match on `page`, line `line` (0-based, in the lines searched).
        case found(page: Int, line: Int)
        /// No page from `startPage` to the document's end has a match; `lastPage` was the last searched.
        case notFound(lastPage: Int)
    }

    /// A search going on from `page` (searched already) of `pageCount` pages of document `doc`.
    package init(pattern: String, forward: Bool, from page: Int, pageCount: Int, doc: String, show: Bool) {
        self.pattern = pattern
        self.forward = forward
        self.startPage = page
        self.pageCount = pageCount
        self.doc = doc
        self.show = show
        next = PageSearch.nextPage(after: page, pageCount: pageCount, forward: forward)
    }

    /// The first step.
    package var start: Step { next.map { .search(page: $0) } ?? .notFound(lastPage: startPage) }

    /// Page `page` was searched: `match` is its first match in the direction of the search.
    package mutating func searched(page: Int, match: Int?) -> Step {
        guard page == next else { return next.map { .search(page: $0) } ?? .notFound(lastPage: page) }
        if let match {
            next = nil
            return .found(page: page, line: match)
        }
        next = PageSearch.nextPage(after: page, pageCount: pageCount, forward: forward)
        return next.map { .search(page: $0) } ?? .notFound(lastPage: page)
    }

    /// How far it has come, for the status line: `page 7 of 23`.
    package var progress: String { "page \(next ?? startPage) of \(pageCount)" }
}

/// A match found on another page than the one on screen, by a search that did not go there:
/// the next `n` (or `N`) in the same direction shows it.
package struct FoundMatch: Equatable, Sendable {
    package var pattern: String
    package var forward: Bool
    package var key: PageKey
    package var line: Int
}
