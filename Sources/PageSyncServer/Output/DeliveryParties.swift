import PageSyncCore

/// What ``TurnDelivery`` needs of a client: where its output stands, the fields the delivery
/// keeps on it (so that no list is searched and no id hashed per change), and its socket.
///
/// The daemon's ``Session`` is one; the tests' clients write into memory. The writes are
/// the only actions the delivery carries out itself, through the member, the moment it
/// decides them: so the fan-out writes the first follower before it does any work for the
/// second, and a flush writes what it took before it takes from the next outbox.
package protocol DeliveryMember: AnyObject {
    /// The client's room.
    associatedtype Runtime: DeliveryRoom where Runtime.Member == Self

    /// What waits to be written, and the connection's state.
    var outbox: Outbox { get set }
    /// How much of its room's ``FanoutLog`` the client has been offered.
    var fanoutCursor: FanoutLog.Cursor { get set }
    /// The room the client is in.
    var runtime: Runtime { get }
    /// Whether the client is in the delivery's flush list.
    var flushQueued: Bool { get set }
    /// Whether the client is in the delivery's list of clients waiting for a group.
    var waitQueued: Bool { get set }
    /// Whether the client is in the delivery's list of input to resume.
    var resumeQueued: Bool { get set }
    /// Commands handled in the current loop turn (see ``TurnBudget``).
    var commandsThisTurn: Int { get set }
    /// Loop time spent on the client's commands in the current loop turn (see ``TurnBudget``).
    var timeThisTurn: Duration { get set }
    /// Whether the client's commands count against the budget the web's members share
    /// (``TurnBudget/webCommands``): a browser's WebSocket.
    var sharesWebBudget: Bool { get }

    /// Whether output is queued in the connection: the kernel would not take more.
    var backedUp: Bool { get }
    /// Memory the output queued in the connection holds (its bytes and each queued write's
    /// bookkeeping): what back-pressure counts.
    var queuedOutputMemory: Int { get }
    /// Writes `bytes` after everything written before; never blocks.
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Writes `chunks`, in order, as one write.
    func write(_ chunks: [OutboxChunk])
    /// Writes `bytes` when nothing is queued in the connection and returns true; otherwise
    /// returns false and writes nothing.
    func writeIfIdle(_ bytes: UnsafeRawBufferPointer) -> Bool
}

/// What ``TurnDelivery`` needs of a room: its members, its fan-out, and where its state
/// stands on the way to being saved. The daemon's ``RoomRuntime`` is one.
package protocol DeliveryRoom: AnyObject {
    /// The room's clients.
    associatedtype Member: DeliveryMember where Member.Runtime == Self

    /// The room's name (a saved record's key).
    var name: String { get }
    /// The room's state now.
    var state: RoomState { get }
    /// The state as of the last group handed to the engine.
    var submitted: RoomState { get set }
    /// The state as of the last settled group: what replies rendered on release report.
    var saved: RoomState { get set }
    /// Whether the room changed in the loop turn now forming a group.
    var changedThisTurn: Bool { get set }
    /// State lines not yet offered to every member.
    var fanout: FanoutLog { get set }
    /// The clients in the room.
    var members: MemberSet<Member> { get }
    /// Puts the room back to `state` (its changes since could not be saved).
    func restore(_ state: RoomState)
    /// The room's `PAGE` line for its state now.
    func pageLine() -> ByteLine
}
