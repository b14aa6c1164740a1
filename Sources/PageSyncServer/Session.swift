import PageSyncCore
import UV

/// One connected client: its connection, its place in a room, and its ``Outbox``.
///
/// Loop-thread only: sessions live inside the ``Coordinator``. `outbox` and `framer` are not
/// checked for exclusivity at run time (see the note in Coordinator.swift).
final class Session {
    // What the fan-out pass reads for every member comes first, so it shares the object's
    // first cache lines.
    /// How much of its room's ``FanoutLog`` this client has been offered.
    var fanoutCursor = FanoutLog.Cursor(run: 0, offered: 0)
    /// What waits to be written, and the connection's state.
    @exclusivity(unchecked) var outbox = Outbox()
    /// The connection's write side without dynamic dispatch (plaintext only), for the fan-out.
    let writer: StreamWriter?
    let connection: any StreamConnection
    let id: Int
    /// The client's name: changed only through ``RoomRuntime/rename(_:to:)``, which keeps the
    /// room's count of names (``RoomRuntime/names``) in step; a change is reported to its room
    /// (its presence lines show it).
    var name: String {
        didSet { if name != oldValue { runtime.memberDetailsChanged() } }
    }
    @exclusivity(unchecked) var framer: LineFramer
    /// The room this client is in (rooms live as long as the coordinator; its member set
    /// holds this session until ``Coordinator/forget(_:)``).
    var runtime: RoomRuntime
    /// Whether this client may turn pages in its room; a change is reported to its room (its
    /// presence lines show it).
    var control: Bool {
        didSet { if control != oldValue { runtime.memberDetailsChanged() } }
    }
    /// Whether the session is in the coordinator's flush list.
    var flushQueued = false
    /// Whether the session is in the coordinator's list of sessions waiting for a group
    /// (``Coordinator/waiting``); cleared when it is forgotten.
    var waitQueued = false
    /// Whether the session is in the coordinator's list of input to resume.
    var resumeQueued = false
    /// The peer half-closed: answer what it sent, then close.
    var inputEnded = false
    /// Commands handled in the current loop turn (see ``TurnBudget``).
    var commandsThisTurn = 0
    /// Loop time spent on this client's commands in the current loop turn (see ``TurnBudget``).
    var timeThisTurn: Duration = .zero
    /// Looks at the first byte the client sends (TLS), and at nothing after it.
    var crossProtocolGuard = CrossProtocolGuard()

    init(id: Int, name: String, connection: any StreamConnection, maxLineLength: Int, runtime: RoomRuntime, control: Bool) {
        self.id = id
        self.name = name
        self.connection = connection
        self.writer = connection.directWriter
        self.framer = LineFramer(maxLineLength: maxLineLength)
        self.runtime = runtime
        self.control = control
    }

    /// Whether output is queued in libuv: the kernel would not take more (`TCP_NOTSENT_LOWAT`).
    var backedUp: Bool { connection.writeQueueSize > 0 }
}

/// What one client may do in one loop turn before other clients' I/O is polled again.
package struct TurnBudget {
    /// Commands per client and turn.
    package static let commands = 64
    /// Output bytes staged per client and turn (a big TEXT reply counts once, then the client waits).
    package static let bytes = 256 << 10
    /// Loop CPU time (``ThreadCPUTime``, so a preempted turn is not charged) per client and
    /// turn, for its commands and, separately, for streaming its large replies: a command that costs more than most (a `WHO` in a room of thousands, on a slow
    /// build) cannot stretch a turn to `commands` times its cost. At least one command runs.
    package static let time: Duration = .milliseconds(1)

    /// Whether a client that has handled `commands` commands, has `stagedBytes` staged and has
    /// used `time` of the loop in this turn must wait for the next turn.
    package static func spent(commands: Int, stagedBytes: Int, time: Duration) -> Bool {
        commands >= Self.commands || stagedBytes >= Self.bytes || (commands > 0 && time >= Self.time)
    }
}
