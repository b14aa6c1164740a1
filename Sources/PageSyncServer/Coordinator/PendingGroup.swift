import PageSyncCore

/// A group of changes handed to the state engine and not settled yet: for each room it
/// changed, the state before it (restored should the group fail) and after it (what the
/// room reports as saved once the group is settled).
struct PendingGroup {
    /// One room's change within the group.
    struct Change {
        let room: RoomRuntime
        let before: RoomState
        let after: RoomState
    }

    /// The group's number (``Coordinator/nextGroup`` when it was formed).
    let id: UInt64
    /// The rooms it changed, in the order they first changed in its turn.
    let changes: [Change]
}
