/// The time as the shell read it: a monotonic count for durations, and the local wall clock.
public struct ClockReading: Equatable, Sendable {
    /// Milliseconds of a monotonic clock (any origin; only differences count).
    public var monotonicMilliseconds: UInt64
    /// The local time of day: hours (0...23).
    public var hour: Int
    /// The local time of day: minutes (0...59).
    public var minute: Int

    /// A reading.
    public init(monotonicMilliseconds: UInt64, hour: Int, minute: Int) {
        self.monotonicMilliseconds = monotonicMilliseconds
        self.hour = hour
        self.minute = minute
    }

    /// The wall clock as `14:05`.
    public var wallClock: String {
        (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }
}

/// The speaker's timer in the notes view: how long the talk has been going.
///
/// A talk starts with its first page turn. A view that starts with the room on page 1 (the talk
/// has not begun) counts from the room's first page turn; one that starts with the room further
/// on (the talk is under way) counts from its own start. `t` restarts it by hand.
package struct SpeakerClock: Equatable, Sendable {
    /// What the timer counts from.
    package enum Origin: Equatable, Sendable {
        /// Waiting for the room's first page turn (the view started on page 1).
        case waitingForFirstTurn
        /// The room's first page turn seen by this view.
        case firstTurn
        /// The view's start (the room was past page 1 already).
        case viewStarted
        /// `t`, pressed by the speaker.
        case restarted
    }

    package private(set) var origin: Origin?
    private var start: UInt64?

    /// A clock that has not seen the room yet.
    package init() {}

    /// The room's state was first heard: on page 1 the clock waits for the first turn.
    package mutating func roomSeen(page: Int, now: UInt64?) {
        guard origin == nil else { return }
        if page <= 1 {
            origin = .waitingForFirstTurn
        } else {
            origin = .viewStarted
            start = now
        }
    }

    /// The time: a clock that started before the first reading counts from this one.
    package mutating func ticked(now: UInt64) {
        if start == nil, origin == .viewStarted || origin == .restarted { start = now }
    }

    /// The room's page changed (a turn): the first one starts a waiting clock.
    package mutating func pageTurned(now: UInt64?) {
        guard origin == .waitingForFirstTurn, let now else { return }
        origin = .firstTurn
        start = now
    }

    /// `t`: counts from now.
    package mutating func restart(now: UInt64?) {
        guard let now else { return }
        origin = .restarted
        start = now
    }

    /// The elapsed time as `m:ss` or `h:mm:ss`, and what it counts from; nil before anything started.
    package func elapsed(now: UInt64?) -> String? {
        guard let origin else { return nil }
        guard origin != .waitingForFirstTurn else { return "0:00 (starts at the first page turn)" }
        guard let start, let now else { return nil }
        let since = switch origin {
        case .firstTurn: "since the first turn"
        case .viewStarted: "since this view started"
        case .restarted: "since t"
        case .waitingForFirstTurn: ""
        }
        return Self.duration(milliseconds: now >= start ? now - start : 0) + " " + since
    }

    /// `m:ss` under an hour, `h:mm:ss` from then on.
    package static func duration(milliseconds: UInt64) -> String {
        let seconds = milliseconds / 1000
        let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        let ss = (s < 10 ? "0" : "") + String(s)
        if h == 0 { return String(m) + ":" + ss }
        return String(h) + ":" + (m < 10 ? "0" : "") + String(m) + ":" + ss
    }
}
