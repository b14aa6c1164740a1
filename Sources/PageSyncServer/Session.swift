import PageSyncCore
import UV

/// An event line encoded once and shared by every session it goes to.
final class SharedLine: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// One connected client: its connection, its place in a room, and what is
/// waiting to be sent to it.
///
/// The outbox has two parts. `replies` holds the replies to its commands, in
/// order; they are bounded because a client whose unsent output passes the
/// high-water mark is no longer read. `pendingEvent` holds at most one `PAGE`
/// line: a newer event replaces an older unsent one (conflation), so a client
/// that stops reading costs one line, not a backlog of stale pages.
///
/// Loop-thread only: sessions live inside the ``Coordinator``.
final class Session {
    let id: Int
    var name: String
    let connection: any StreamConnection
    var framer: LineFramer
    /// The room this client is in.
    var room: String
    /// Whether this client may turn pages in its room.
    var control: Bool
    /// Replies staged in this loop iteration, written before the next poll.
    var replies: [UInt8] = []
    /// The newest state line not yet written.
    var pendingEvent: SharedLine?
    /// Whether the session is in the coordinator's flush list.
    var flushQueued = false
    /// Whether reading is paused because too much output is unsent.
    var throttled = false
    /// QUIT, HTTP or shutdown: write what is staged, then close.
    var closeAfterFlush = false
    /// The connection is closed or closing; nothing more is done for it.
    var closed = false
    /// The peer half-closed: answer what it already sent, then close.
    var inputEnded = false

    init(id: Int, name: String, connection: any StreamConnection, maxLineLength: Int, room: String, control: Bool) {
        self.id = id
        self.name = name
        self.connection = connection
        self.framer = LineFramer(maxLineLength: maxLineLength)
        self.room = room
        self.control = control
    }

    /// Bytes produced for this client and not yet taken by the kernel.
    var backlog: Int { replies.count + connection.writeQueueSize }
}
