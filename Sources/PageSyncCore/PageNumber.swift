/// A page of a document, numbered the way people and the wire count: the first page is 1.
///
/// `PageNumber` is the only place that converts between the 1-based number shown to
/// people (and sent on the wire) and the 0-based offset used inside arrays.
/// A `PageNumber` always holds a number >= 1.
public struct PageNumber: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 1-based page number; always >= 1.
    public let number: Int

    /// Creates a page from its 1-based number, or returns nil when `number` < 1.
    public init?(_ number: Int) {
        guard number >= 1 else { return nil }
        self.number = number
    }

    /// Creates a page from its 0-based offset. Traps when `offset` < 0 or `offset` == `Int.max`.
    public init(offset: Int) {
        precondition(offset >= 0 && offset < Int.max, "page offset out of range: \(offset)")
        self.number = offset + 1
    }

    /// The 0-based offset of this page (`number - 1`).
    public var offset: Int { number - 1 }

    /// Page 1.
    public static let first = PageNumber(offset: 0)

    /// The page nearest to `number` in a document of `pageCount` pages: below 1
    /// becomes page 1, past the end becomes the last page.
    public init(clamping number: Int, pageCount: Int) {
        self.number = min(max(1, number), max(1, pageCount))
    }

    /// The page `delta` pages away in a document of `pageCount` pages. Past an end
    /// it wraps around when `wrapping` is true, and is nil otherwise.
    public func advanced(by delta: Int, pageCount: Int, wrapping: Bool) -> PageNumber? {
        let count = max(1, pageCount)
        let target = offset + delta
        if (0..<count).contains(target) { return PageNumber(offset: target) }
        guard wrapping else { return nil }
        let wrapped = target % count
        return PageNumber(offset: wrapped < 0 ? wrapped + count : wrapped)
    }

    /// The last page of a document of `pageCount` pages.
    public static func last(of pageCount: Int) -> PageNumber { PageNumber(clamping: pageCount, pageCount: pageCount) }

    /// Pages order by their number.
    public static func < (lhs: PageNumber, rhs: PageNumber) -> Bool { lhs.number < rhs.number }

    /// The decimal 1-based number, as written on the wire (`"3"`).
    public var description: String { String(number) }
}
