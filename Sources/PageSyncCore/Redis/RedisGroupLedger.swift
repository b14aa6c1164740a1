/// The groups of changes the Redis engine has sent and not settled: how many script replies
/// each still waits for (one per room it holds), and what settles or fails them.
///
/// Groups settle in order: a group whose replies are all in settles once every group before
/// it has. A group with a failed reply fails, with every group after it, once it reaches the
/// front (the coordinator undoes them and answers `ERR 507`/`503`); so do all groups sent when
/// the connection is lost.
public struct RedisGroupLedger: Equatable, Sendable {
    /// What the engine reports.
    public enum Event: Equatable, Sendable {
        /// Every group up to this one is saved.
        case settled(upTo: UInt64)
        /// Every group after `after` failed.
        case failed(after: UInt64)
    }

    private struct Group: Equatable, Sendable {
        let id: UInt64
        var remaining: Int
        var failed: Bool
    }

    private var groups: [Group] = []

    /// An empty ledger.
    public init() {}

    /// Whether a group waits for replies.
    public var isEmpty: Bool { groups.isEmpty }

    /// Group `group` was sent as `replies` script calls. A group of no room settles as soon as
    /// the groups before it have.
    public mutating func sent(group: UInt64, replies: Int) -> [Event] {
        groups.append(Group(id: group, remaining: replies, failed: false))
        return replies == 0 ? settleFront() : []
    }

    /// One of group `group`'s script calls answered (`ok`: it was applied). A reply for a
    /// group no longer waiting (failed meanwhile) changes nothing.
    public mutating func replied(group: UInt64, ok: Bool) -> [Event] {
        guard let i = groups.firstIndex(where: { $0.id == group }) else { return [] }
        groups[i].remaining -= 1
        if !ok { groups[i].failed = true }
        return settleFront()
    }

    /// The connection was lost: every group waiting fails.
    public mutating func lost() -> Event? {
        guard let first = groups.first else { return nil }
        groups.removeAll()
        return .failed(after: first.id - 1)
    }

    private mutating func settleFront() -> [Event] {
        var events: [Event] = []
        while let first = groups.first, first.remaining <= 0 {
            groups.removeFirst()
            if first.failed {
                groups.removeAll()
                events.append(.failed(after: first.id - 1))
                break
            }
            events.append(.settled(upTo: first.id))
        }
        return events
    }
}
