/// What a member's screen shows (`VIEW`): presence, not room state: it never bumps the version.
public enum MemberView: Equatable, Hashable, Sendable {
    /// The room's page (every member until it says otherwise: netcat scripts stay simple).
    case follow
    /// Another page than the room's: this one.
    case browse(PageNumber)

    /// `follow`, or `browse:<page>`: how `WHO` and `OK VIEW` write it.
    public var text: String {
        switch self {
        case .follow: "follow"
        case .browse(let page): "browse:\(page.number)"
        }
    }
}

/// `HAND ...`: a member's own hand, or others' (those need control).
public enum HandCommand: Equatable, Sendable {
    /// `HAND UP`: raise your hand.
    case up
    /// `HAND DOWN`: lower your hand.
    case down
    /// `HAND DOWN <name>`: lower that member's hand.
    case downFor(String)
    /// `HAND DOWN ALL`: lower every hand in the room.
    case downAll
}

/// How many members of a room follow its page, browse elsewhere, and have a hand up: what a
/// member with control sees (`AUDIENCE`, `STATUS`). Kept up to date as members come, go, and
/// change their view or hand, never recounted.
public struct AudienceCounts: Equatable, Sendable {
    /// Members whose screens show the room's page.
    public private(set) var following = 0
    /// Members reading another page.
    public private(set) var browsing = 0
    /// Raised hands.
    public private(set) var hands = 0

    /// No members.
    public init() {}

    /// A member arrives with `view` and its hand `up`, or (`sign` -1) leaves with them.
    public mutating func count(_ view: MemberView, hand up: Bool, sign: Int = 1) {
        if view == .follow { following += sign } else { browsing += sign }
        if up { hands += sign }
    }

    /// The audience of other daemons' members of a presenter room, from their presence lines
    /// (``Wire/whoMember(name:control:view:hand:)``): those without control; a line from a daemon
    /// older than `view=` counts as following, hand down.
    public static func counting(presenceLines lines: [String]) -> AudienceCounts {
        var counts = AudienceCounts()
        for line in lines {
            let words = line.split(separator: " ")
            guard !words.contains("control=yes") else { continue }
            let view = words.first { $0.hasPrefix("view=") }.map { $0.dropFirst(5) } ?? "follow"
            counts.count(view == "follow" ? .follow : .browse(.first), hand: words.contains("hand=up"))
        }
        return counts
    }

    /// The sum of two rooms' worth of counts (this daemon's members and the others').
    public static func + (a: AudienceCounts, b: AudienceCounts) -> AudienceCounts {
        var sum = a
        sum.following += b.following
        sum.browsing += b.browsing
        sum.hands += b.hands
        return sum
    }

    /// A member's view changed from `old` to `new`.
    public mutating func moved(from old: MemberView, to new: MemberView) {
        count(old, hand: false, sign: -1)
        count(new, hand: false)
    }

    /// A hand went up (`true`) or down.
    public mutating func hand(_ up: Bool) { hands += up ? 1 : -1 }
}

/// When a room's `AUDIENCE` event goes out: at once after a quiet spell, otherwise coalesced so
/// that a room sends at most one per ``interval`` milliseconds (4 a second), the last one with
/// the counts of its moment. Events in, actions out; the shell owns the timer.
public struct AudienceCoalescer: Equatable, Sendable {
    /// The least time between two events of one room, in milliseconds.
    public static let interval: UInt64 = 250

    /// What the shell does after ``changed(now:)``.
    public enum Action: Equatable, Sendable {
        /// Send the event now.
        case send
        /// Send it at this time (milliseconds, the same clock as `now`), unless one is due already.
        case sendAt(UInt64)
        /// Nothing: an event is due already and will carry this change.
        case wait
    }

    private var lastSent: UInt64?
    private var due: UInt64?

    /// A room that has sent nothing yet.
    public init() {}

    /// The counts changed at `now`.
    public mutating func changed(now: UInt64) -> Action {
        if due != nil { return .wait }
        guard let last = lastSent, now < last + Self.interval else {
            lastSent = now
            return .send
        }
        due = last + Self.interval
        return .sendAt(last + Self.interval)
    }

    /// The shell's timer reached `now`: whether the event due goes out now.
    public mutating func fire(now: UInt64) -> Bool {
        guard let due, now >= due else { return false }
        self.due = nil
        lastSent = now
        return true
    }

    /// When the next event is due (nil: none).
    public var nextDue: UInt64? { due }
}
