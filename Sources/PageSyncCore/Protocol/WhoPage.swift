/// Which names one `WHO` reply lists: a bounded page, so that a 4-byte request can never
/// be answered with the whole of a large room.
public struct WhoPage: Equatable, Sendable {
    /// The positions (in join order) listed in this reply.
    public var range: Range<Int>
    /// The offset to send as `WHO <offset>` for the next page, or nil when this page is the last.
    public var next: Int?

    /// The page of at most `pageSize` (>= 1) names starting at `offset` in a room of `total`.
    /// An offset at or past the end gives an empty page with no next.
    public init(total: Int, offset: Int, pageSize: Int) {
        let total = max(0, total)
        let start = min(max(0, offset), total)
        let end = start + min(max(1, pageSize), total - start)
        range = start..<end
        next = end < total ? end : nil
    }

    /// A page holding exactly `range`, followed by `next`.
    public init(range: Range<Int>, next: Int?) {
        self.range = range
        self.next = next
    }

    /// `OK WHO <total>`, plus ` next=<offset>` when more names follow.
    public func header(total: Int) -> String {
        next.map { "OK WHO \(total) next=\($0)" } ?? "OK WHO \(total)"
    }
}
