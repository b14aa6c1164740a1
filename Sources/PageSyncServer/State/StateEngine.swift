import PageSyncCore

/// What a state engine read back at start.
public struct LoadedState: Sendable {
    /// Each room's last saved state, served as loaded. An engine that cannot prove it holds
    /// the last acknowledged state moves the rooms to a new epoch and records that itself,
    /// before it writes anything else (the journal does), so the rooms here are already in it.
    public var rooms: [String: SavedRoom]
}

/// What a state engine reports about the groups it was given.
public enum EngineEvent: Equatable, Sendable {
    /// Every group up to this one is settled: durable, or failed and already reported.
    case settled(upTo: UInt64)
    /// Every group after `after` failed: undo its changes and answer `ERR 507` with `reason`.
    case failed(after: UInt64, reason: String)
}

/// The one place that knows where room state lives.
///
/// The coordinator loads every room at start, hands the engine the changed rooms of each
/// loop turn as one numbered group, and learns through `onEvent` when groups are durable
/// or have failed. It sends no `OK` or `PAGE` about a change before that. Loop thread only.
public protocol StateEngine: AnyObject, Sendable {
    /// Called with every settlement and failure, possibly from inside ``submit(group:rooms:)``.
    var onEvent: ((EngineEvent) -> Void)? { get set }
    /// The whole current state, for snapshots (set by the coordinator).
    var snapshot: (() -> [SavedRoom])? { get set }
    /// Nil while changes are accepted; otherwise why not (the text after `state not saved: `).
    var refusal: String? { get }
    /// Whether disk work is still in flight (shutdown waits for it).
    var isBusy: Bool { get }
    /// What the engine counted about itself (`INFO engine`, `/metrics`).
    var statistics: EngineStatistics { get }
    /// Reads every room back. Called once, before the loop runs.
    func load() throws(StateEngineError) -> LoadedState
    /// The coordinator is ready for events (``onEvent`` and ``snapshot`` are set).
    func started()
    /// Saves group `group` (numbered 1, 2, 3, ... in order): each room's new state.
    func submit(group: UInt64, rooms: [SavedRoom])
    /// Called once after the loop stopped: records a clean stop if everything was saved.
    func closeCleanly()
}

/// A state engine problem, in one line.
public struct StateEngineError: Error, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A state engine that is the authority over room state shared with other daemons (Redis).
///
/// The coordinator does not apply navigations locally first: it asks ``navigate(room:navigation:ifVersion:by:pageCount:wraps:completion:)``
/// and answers from the decision. Every state the engine learns (made by any daemon, this one
/// included, or read back after an outage) comes through ``onRoomState``; the coordinator
/// applies it to its room only if it is newer within the epoch, or of another epoch, and fans
/// it out to local members. Groups handed to ``StateEngine/submit(group:rooms:)`` (rooms created
/// at start, documents re-indexed) settle as with any engine. Loop thread only.
public protocol AuthoritativeStateEngine: StateEngine {
    /// Called with each room state the engine learns.
    var onRoomState: ((SavedRoom) -> Void)? { get set }
    /// A room's page count in this daemon (set by the coordinator): pages beyond it are clamped
    /// when this daemon records its document.
    var pageCount: ((String) -> Int)? { get set }
    /// Each room's state as this daemon last served it saved (set by the coordinator): after an
    /// outage the engine checks that the shared state has not gone back behind it.
    var savedRooms: (() -> [SavedRoom])? { get set }
    /// Whether changes can be made now (false while Redis is unreachable).
    var isAvailable: Bool { get }
    /// Decides one navigation: conditions checked, version bumped and the new state published
    /// atomically. `saved` is the room's state as this daemon last served it saved: a shared
    /// state behind it in the same epoch (Redis lost changes) is not changed but made again
    /// (``NavigationDecision/missing``). `completion` runs once, on the loop thread, possibly
    /// before this returns.
    func navigate(room: String, navigation: Navigation, ifVersion: UInt64?, by: String,
                  pageCount: Int, wraps: Bool, saved: RoomState, completion: @escaping (NavigationDecision) -> Void)
    /// Decides one `LINE` or `MARK` as ``navigate(room:navigation:ifVersion:by:pageCount:wraps:saved:completion:)``
    /// decides a page turn. `page` is the page the daemon checked the line or mark against:
    /// a room that has left it refuses the change (409).
    func changeFocus(room: String, focus: FocusChange, ifVersion: UInt64?, by: String, page: PageNumber,
                     saved: RoomState, completion: @escaping (NavigationDecision) -> Void)
    /// Records this daemon's members of `room` (one line each; empty removes them).
    func publishMembers(room: String, lines: [String])
    /// Shutdown began: stop reconnecting; commands already sent still complete.
    func shutdown()
    /// Other daemons' live members of each room, one line each, or nil if unavailable.
    func otherMembers(rooms: [String], completion: @escaping ([[String]]?) -> Void)
}
