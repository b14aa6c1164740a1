/// What a daemon that started while Redis was unreachable does with each room once Redis
/// answers: the same rules as a start with Redis up (``RoomRestore``), applied late.
///
/// Until then the daemon served each room from a fresh local state (page 1, version 0, a new
/// epoch) and refused every change, so nothing it holds is worth keeping over the shared state.
public enum LateLoad {
    /// One room's reconciliation.
    public enum Action: Equatable, Sendable {
        /// Redis has no such room: create it from this daemon's state (kept if another daemon
        /// created it meanwhile).
        case create(SavedRoom)
        /// Redis has the room for this daemon's document and a page it has: take it as it is.
        case adopt(SavedRoom)
        /// Redis has the room, but for another document or on a page this document lacks:
        /// record this daemon's document with the page clamped, as a start with Redis up does.
        /// The state is what the daemon would have restored; the script bumps the version.
        case recordDocument(SavedRoom)
    }

    /// - Parameters:
    ///   - shared: the room's state in Redis, or nil when Redis has none.
    ///   - local: the state this daemon served meanwhile (its document id and epoch are used).
    ///   - pageCount: this daemon's page count for the room (below 1 counts as 1).
    public static func decide(shared: SavedRoom?, local: SavedRoom, pageCount: Int) -> Action {
        guard let shared else { return .create(local) }
        let outcome = RoomRestore.restore(saved: shared, pageCount: pageCount, doc: local.doc,
                                          freshEpoch: local.epoch)
        guard outcome.needsSave else { return .adopt(shared) }
        return .recordDocument(SavedRoom(room: shared.room, state: outcome.state))
    }
}
