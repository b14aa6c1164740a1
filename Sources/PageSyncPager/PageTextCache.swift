/// Which page of which document: the key page text is cached under.
package struct PageKey: Hashable, Sendable {
    package var doc: String
    package var page: Int

    /// Each stored property as given (the memberwise initializer, visible to the package's tests).
    package init(doc: String, page: Int) {
        self.doc = doc
        self.page = page
    }
}

/// The text of recently shown pages, least recently stored evicted first, plus which pages
/// have been asked for and not answered yet. Holds at most ``limit`` pages.
package struct PageTextCache: Sendable {
    /// Pages of text kept in memory.
    package static let limit = 24

    private var texts: [PageKey: [String]] = [:]
    private var order: [PageKey] = []
    private var requested: Set<PageKey> = []

    /// The lines of `key`, if held.
    package subscript(key: PageKey) -> [String]? { texts[key] }

    /// Whether `key` should be asked for: neither held nor already asked for.
    package func needs(_ key: PageKey) -> Bool { texts[key] == nil && !requested.contains(key) }

    /// Notes that `key` was asked for.
    package mutating func markRequested(_ key: PageKey) { requested.insert(key) }

    /// Forgets that `key` was asked for (its answer was a long page, read in pieces instead).
    package mutating func forgetRequest(_ key: PageKey) { requested.remove(key) }

    /// Forgets every unanswered request (the connection closed).
    package mutating func forgetRequests() { requested = [] }

    /// Stores `lines` for `key`; evicts the oldest pages beyond ``limit``, never `keep`.
    package mutating func store(_ lines: [String], for key: PageKey, keep: PageKey?) {
        if texts[key] == nil { order.append(key) }
        texts[key] = lines
        var passes = order.count
        while order.count > Self.limit, passes > 0 {
            passes -= 1
            let evict = order.removeFirst()
            if evict == keep { order.append(evict); continue }
            texts[evict] = nil
            requested.remove(evict)
        }
    }

    /// Every property at its initial value.
    package init() {}
}
