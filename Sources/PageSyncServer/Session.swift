import PageSyncCore
import UV

/// One connected client: its connection, its place in a room, and its ``Outbox``.
///
/// Loop-thread only: sessions live inside the ``Coordinator``. `framer` and the fields
/// ``TurnDelivery`` reaches (``DeliveryMember``) are not checked for exclusivity at run time
/// (see the note in TurnDelivery.swift).
final class Session: DeliveryMember {
    // What the fan-out pass reads for every member comes first, so it shares the object's
    // first cache lines.
    /// How much of its room's ``FanoutLog`` this client has been offered.
    @exclusivity(unchecked) var fanoutCursor = FanoutLog.Cursor(run: 0, offered: 0)
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
    // The fields below are ordered so that the one-byte ones fill the padding after `view`:
    // the object is 248 bytes, the largest that malloc keeps in a 256-byte chunk (one byte more
    // took 272 on every idle member).
    /// What its screen shows (`VIEW`; following until it says otherwise). Presence: no version.
    var view: MemberView = .follow
    /// Whether this client may turn pages in its room; a change is reported to its room (its
    /// presence lines show it).
    var control: Bool {
        didSet {
            if control != oldValue {
                runtime.memberDetailsChanged()
                runtime.controlChanged(self, was: oldValue)
            }
        }
    }
    /// Whether the session is in the delivery's flush list (``TurnDelivery``).
    @exclusivity(unchecked) var flushQueued = false
    /// Whether the session is in the delivery's list of sessions waiting for a group
    /// (``TurnDelivery/waiting``); cleared when it is forgotten.
    @exclusivity(unchecked) var waitQueued = false
    /// Whether the session is in the delivery's list of input to resume.
    @exclusivity(unchecked) var resumeQueued = false
    /// The peer half-closed: answer what it sent, then close.
    var inputEnded = false
    /// Looks at the first byte the client sends (TLS), and at nothing after it.
    var crossProtocolGuard = CrossProtocolGuard()
    /// A browser's WebSocket: its commands share the web's budget per turn (``TurnBudget``).
    let sharesWebBudget: Bool
    /// ``handRaised``, with 0 for none (an optional would take 16 bytes).
    private var handRaisedAt: UInt64 = 0
    /// When its hand went up (a number that only grows, never 0: the lowest is the hand up
    /// longest), or nil.
    var handRaised: UInt64? {
        get { handRaisedAt == 0 ? nil : handRaisedAt }
        set { handRaisedAt = newValue.map { max(1, $0) } ?? 0 }
    }
    /// Commands handled in the current loop turn (see ``TurnBudget``).
    @exclusivity(unchecked) var commandsThisTurn = 0
    /// Loop time spent on this client's commands in the current loop turn (see ``TurnBudget``).
    @exclusivity(unchecked) var timeThisTurn: Duration = .zero

    init(id: Int, name: String, connection: any StreamConnection, maxLineLength: Int, runtime: RoomRuntime, control: Bool) {
        self.id = id
        self.name = name
        self.connection = connection
        self.writer = connection.directWriter
        self.sharesWebBudget = connection is WebSocketConnection
        self.framer = LineFramer(maxLineLength: maxLineLength)
        self.runtime = runtime
        self.control = control
    }

    /// Whether output is queued in libuv: the kernel would not take more (`TCP_NOTSENT_LOWAT`).
    var backedUp: Bool { connection.writeQueueSize > 0 }

    /// What the output queued in libuv holds in memory (``StreamConnection/queuedOutputMemory``).
    var queuedOutputMemory: Int { connection.queuedOutputMemory }

    func write(_ bytes: UnsafeRawBufferPointer) {
        connection.write(bytes)
    }

    /// One chunk as one write, two (the usual flush of a navigation: its `OK`, then the room's
    /// `PAGE`) as one gathered write without ``withGatheredBytes(_:groupSize:_:)``'s generic
    /// nesting, which costs as much as the write itself; more through it.
    func write(_ chunks: [OutboxChunk]) {
        switch chunks.count {
        case 0: break
        case 1: chunks[0].withUnsafeBytes { connection.write($0) }
        case 2: Self.writePair(chunks[0], chunks[1], to: connection)
        default: withGatheredBytes(chunks) { connection.write(gathering: $0) }
        }
    }

    /// The fan-out's direct write (plaintext connections only; a TLS session's output always
    /// goes through its outbox).
    func writeIfIdle(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let writer else { return false }
        return writer.writeIfIdle(bytes)
    }

    private static func writePair(_ first: OutboxChunk, _ second: OutboxChunk, to connection: any StreamConnection) {
        first.withUnsafeBytes { first in
            second.withUnsafeBytes { second in
                var pair = (first, second)
                withUnsafePointer(to: &pair) { pair in
                    pair.withMemoryRebound(to: UnsafeRawBufferPointer.self, capacity: 2) {
                        connection.write(gathering: UnsafeBufferPointer(start: $0, count: 2))
                    }
                }
            }
        }
    }
}

/// A flush writes several chunks as one gathered write (``withGatheredBytes(_:groupSize:_:)``).
extension OutboxChunk: ContiguousBytesLender {}

/// What one client may do in one loop turn before other clients' I/O is polled again.
package struct TurnBudget {
    /// Commands per client and turn.
    package static let commands = 64
    /// Commands per turn of all the web's members together (browsers: a reader sends a command
    /// now and then), so that a flood of WebSocket commands, from however many connections,
    /// delays the line protocol's members by at most these few commands a turn.
    package static let webCommands = 8
    /// Commands a second of all the web's members together, and how many may go at once after
    /// a quiet spell: a reader turns a page or browses now and then, a class of 1,000 browsers
    /// reconnecting after a restart sends about one command each; a flood, from however many
    /// WebSockets, gets this rate and no more, and its members' input waits meanwhile (unread,
    /// like any paused input). Without it a flood kept the loop busy with web commands in
    /// every turn, and each line-protocol member's round trip waited for a turn of them
    /// (`pagesync-bench webflood`, 16 WebSockets with 64 commands in flight each: a TCP
    /// member's `PING` p99 1.4 to 1.7 times quiet; with 2,000 a second 1.15 to 1.25; with
    /// 1,000, 0.98 to 1.05).
    package static let webCommandsPerSecond = 1000
    /// See ``webCommandsPerSecond``.
    package static let webBurst = 256
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
