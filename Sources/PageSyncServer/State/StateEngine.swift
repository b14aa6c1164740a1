import PageSyncCore

/// What a state engine read back at start.
public struct LoadedState: Sendable {
    /// Each room's last saved state.
    public var rooms: [String: SavedRoom]
    /// Why every room starts a new epoch, or nil when the saved history can be trusted.
    public var newEpochReason: String?
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
