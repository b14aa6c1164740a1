/// The rules for sharing a room's members between daemons through Redis: what a member's
/// line says, when a daemon sends its list, and how `WHO` and `ROOMS` merge the lists.
///
/// Each daemon keeps one entry per room in Redis (the presence script) with an expiry taken
/// from Redis's clock; a daemon that stops sending (killed) drops out once its entry expires.
///
/// The bounds PROTOCOL.md gives: a join, leave or rename is in other daemons' `WHO` within
/// half a second (the next tick, at most ``tickMilliseconds`` later, plus a Redis round trip);
/// after an outage a daemon sends its lists again as soon as it has reconnected
/// (``PresenceTracker/lookAtEngine(available:)``), not on its next heartbeat.
public enum PresenceRules {
    /// How often the daemon looks at its members (ms). A room whose members did not change
    /// costs O(1) a tick (``PresenceTracker``), so a short tick costs little.
    public static let tickMilliseconds: UInt64 = 250
    /// The first look, shortly after start (ms).
    public static let firstTickMilliseconds: UInt64 = 200
    /// Every this many ticks an unchanged, non-empty list is sent again (the heartbeat, every 5 s).
    public static let heartbeatTicks = 20
    /// How long an entry stays listed without a heartbeat (ms).
    public static let ttlMilliseconds = 20_000
    /// The longest time between two sends of an unchanged list (ms). Below the TTL, so a live
    /// daemon's entry never expires; a killed daemon's expires at most the TTL after it died.
    public static var heartbeatMilliseconds: Int { heartbeatTicks * Int(tickMilliseconds) }

    /// Whether tick `tick` (1, 2, 3, ...) is a heartbeat: the first tick, and every
    /// ``heartbeatTicks`` after it.
    public static func isHeartbeat(tick: Int) -> Bool {
        tick >= 1 && (tick - 1) % heartbeatTicks == 0
    }

    /// A member as other daemons list it: `<name> control=yes|no view= hand=` (``Wire/whoMember(name:control:view:hand:)``).
    public static func memberLine(name: String, control: Bool, view: MemberView = .follow, hand: Bool = false) -> String {
        Wire.whoMember(name: name, control: control, view: view, hand: hand)
    }

    /// One member in a `WHO` reply: its member line and whether it is the asking client
    /// (``Wire/whoLine(member:isYou:)``).
    public static func whoLine(_ memberLine: String, isYou: Bool) -> String {
        Wire.whoLine(member: memberLine, isYou: isYou)
    }

    /// `WHO` across daemons: raised hands first, then everyone else; within each, this daemon's
    /// members (in the order `local` has them, the asker marked) before the other daemons'
    /// (never the asker).
    public static func whoLines(local: [(line: String, isYou: Bool)], others: [String]) -> [String] {
        let all = local.map { whoLine($0.line, isYou: $0.isYou) } + others.map { whoLine($0, isYou: false) }
        let raised = all.filter { $0.contains(" hand=up") }
        return raised.isEmpty ? all : raised + all.filter { !$0.contains(" hand=up") }
    }

    /// `ROOMS` across daemons: other daemons' client count per room, from the reply to
    /// "other members of these rooms" (one list per room, in order). nil (Redis could not be
    /// asked) or a reply of the wrong length counts nobody: the rooms show local clients only.
    public static func otherClientCounts(rooms: [String], replies: [[String]]?) -> [String: Int] {
        guard let replies, replies.count == rooms.count else { return [:] }
        var counts: [String: Int] = [:]
        for (room, lines) in zip(rooms, replies) { counts[room] = lines.count }
        return counts
    }
}

/// What one daemon last told Redis about its members, and what it must send next.
///
/// A room's member lines are built only when its *presence revision* moved: a number the
/// owner changes whenever the lines could have changed (a member joined or left, or changed
/// its name or control flag) and never otherwise. A room whose revision stands still costs
/// O(1) per tick, however many members it has: nothing is built or compared, and a
/// heartbeat sends what was sent last, as it is.
public struct PresenceTracker: Equatable, Sendable {
    /// The member lines last sent per room (a room with no entry: nothing sent, or cleared).
    public private(set) var sent: [String: [String]] = [:]
    /// Each room's presence revision when its lines were last built.
    private var built: [String: UInt64] = [:]
    /// Whether the engine could be reached when last looked at (``lookAtEngine(available:)``).
    private var engineWasAvailable = false

    /// An empty tracker: nothing sent yet.
    public init() {}

    /// The lines to send for `room` now, or nil when nothing need be sent, with `lines`
    /// called (to build the room's member lines) only when `revision` differs from the one
    /// given when they were last built, or none was. Rebuilt lines follow
    /// ``due(room:lines:heartbeat:)``; with the revision unchanged, a heartbeat sends the
    /// lines last sent for the room (if any) again, and any other tick sends nothing.
    public mutating func due(room: String, revision: UInt64, heartbeat: Bool, lines: () -> [String]) -> [String]? {
        if built[room] == revision {
            return heartbeat ? sent[room] : nil
        }
        built[room] = revision
        return due(room: room, lines: lines(), heartbeat: heartbeat)
    }

    /// The lines to send for `room` now, or nil when nothing need be sent: a list that
    /// changed is sent (an empty one clears this daemon's entry); on a heartbeat an unchanged
    /// non-empty list is sent again so it does not expire. Records what it returns as sent.
    public mutating func due(room: String, lines: [String], heartbeat: Bool) -> [String]? {
        let last = sent[room] ?? []
        guard lines != last || (heartbeat && !lines.isEmpty) else { return nil }
        sent[room] = lines.isEmpty ? nil : lines
        return lines
    }

    /// Looks at whether Redis can be reached now, as often as that can change (after every
    /// loop turn): true when it has just become reachable, the first time or again after an
    /// outage. Every room's lines must then be sent at once, as on a heartbeat: what this daemon
    /// sent before may be gone (a restart without persistence, a failover to a replica that
    /// had not seen it), and the next heartbeat can be ``PresenceRules/heartbeatMilliseconds``
    /// away.
    public mutating func lookAtEngine(available: Bool) -> Bool {
        defer { engineWasAvailable = available }
        return available && !engineWasAvailable
    }

    /// Shutdown: the rooms whose entries must be cleared (sent non-empty), in name order;
    /// afterwards nothing counts as sent or built.
    public mutating func leaving() -> [String] {
        let rooms = sent.filter { !$0.value.isEmpty }.keys.sorted()
        sent.removeAll()
        built.removeAll()
        return rooms
    }
}
