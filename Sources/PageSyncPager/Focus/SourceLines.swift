import PageSyncCore

/// How the room's line, a document line of its page (what `TEXT` returns, numbered from 1),
/// maps onto the lines the pager shows, and back.
///
/// Plain text shows the document's lines one for one. A markdown page shows its rendered lines:
/// a document line maps to the first rendered line of the top-level block it belongs to (a code
/// block's lines one for one), and a rendered line back to its block's first document line, so a
/// paragraph wrapped over many rows is one line to the room. A long page read in pieces shows
/// the lines held, from its `firstLine` on.
package enum SourceLines: Equatable, Sendable {
    /// Document line n is shown line n - 1.
    case plain
    /// The rendered page's blocks and how many lines it shows.
    case markdown([RenderedMarkdown.Block], shownCount: Int)
    /// The held lines of a long page, the first of them the page's line `firstLine + 1`.
    case window(firstLine: Int)

    /// The shown line (0-based) of document line `line` (from 1).
    package func shown(_ line: Int) -> Int {
        switch self {
        case .plain: return max(0, line - 1)
        case .window(let first): return max(0, line - 1 - first)
        case .markdown(let blocks, let count):
            guard let b = blocks.last(where: { $0.source.lowerBound <= line }) else { return 0 }
            if b.code {
                let fence = b.source.count > b.rendered.count ? 1 : 0
                return b.rendered.lowerBound + min(max(0, line - b.source.lowerBound - fence), b.rendered.count - 1)
            }
            if line > b.source.upperBound { return min(b.rendered.upperBound, max(0, count - 1)) }  // a blank line after it
            return b.rendered.lowerBound
        }
    }

    /// The document line (from 1) that shown line `index` (0-based) stands for.
    package func source(ofShown index: Int) -> Int {
        switch self {
        case .plain: return index + 1
        case .window(let first): return first + index + 1
        case .markdown(let blocks, _):
            guard let b = blocks.last(where: { $0.rendered.lowerBound <= index }) else { return 1 }
            if index >= b.rendered.upperBound { return b.source.upperBound + 1 }  // the blank line after it
            if b.code {
                let fence = b.source.count > b.rendered.count ? 1 : 0
                return b.source.lowerBound + fence + (index - b.rendered.lowerBound)
            }
            return b.source.lowerBound
        }
    }

    /// The shown lines of document lines `range`: from the first's shown line through the last
    /// shown line of the block holding the last.
    package func shown(_ range: LineRange) -> ClosedRange<Int> {
        let first = shown(range.first)
        var last = shown(range.last)
        if case .markdown(let blocks, _) = self, let b = blocks.last(where: { $0.source.lowerBound <= range.last }),
           !b.code, range.last <= b.source.upperBound {
            last = b.rendered.upperBound - 1
        }
        return first...max(first, last)
    }
}
