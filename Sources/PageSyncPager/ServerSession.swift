import PageSyncCore

/// A client's life with one server across connections: the greeting check, the handshake after
/// each greeting (`NAME`, `JOIN` back to the room, `AUTH`), the server's parting words, and
/// reconnecting with backoff. The pager (``PagerModel``) and the notes view
/// (``NotesViewModel``) each hold one; what they show of it is theirs.
package struct ServerSession: Sendable {
    /// The connection as shown to people.
    package private(set) var connection: ConnectionState = .connecting
    /// Whether a greeting was ever heard (before that, a failure may end the client).
    package private(set) var greeted = false
    /// The server's reason for closing (its last `BYE`, or an `ERR` nobody asked for such as
    /// `ERR 503 server full`), kept through refused reconnects until the next greeting.
    package var farewell: String?
    /// The room to be in after every greeting: `--room`, else the first greeting's.
    package private(set) var rejoinRoom: String?
    private var awaitingFirstLine = false
    private var attempts = 0
    private var jitter: JitterRandom
    /// The wait before the next reconnection: 100 ms doubling to 5 s, jittered so that the
    /// clients of a room that lost its server do not all come back in the same millisecond.
    private var reconnectWait = Backoff(longestMilliseconds: 5_000)

    /// A session that has not connected yet; `seed` jitters the reconnection waits.
    package init(seed: UInt64) {
        jitter = JitterRandom(seed: seed)
    }

    /// The connection is up: its first line must be pagesync's.
    package mutating func connected() {
        awaitingFirstLine = true
    }

    /// Why the connection's first message shows that the server is no pagesync server (nil when
    /// it is, or when this is not the first message): a pagesync server speaks first, with its
    /// greeting, or with `ERR`/`BYE` (full, shutting down).
    package mutating func notPagesync(_ msg: ServerMessage) -> String? {
        guard awaitingFirstLine else { return nil }
        awaitingFirstLine = false
        guard case .line(let line) = msg, ![.hello, .error, .bye].contains(line.kind) else { return nil }
        let said = Layout.truncate(Sanitizer.plainText(([line.head] + line.words).joined(separator: " ")), toWidth: 80)
        return "not a pagesync server (it said: \(said))"
    }

    /// A greeting in room `room` (`name=` the server's name for this client): connected, and the
    /// handshake to send, in order (`NAME`, `JOIN`, `AUTH`, each only when needed).
    package mutating func greeting(room: String, name: String?, options: PagerOptions) -> [Command] {
        connection = .connected
        attempts = 0
        reconnectWait.reset()
        greeted = true
        farewell = nil
        if rejoinRoom == nil { rejoinRoom = options.room ?? room }
        var commands: [Command] = []
        if let wanted = options.name, wanted != name { commands.append(.name(wanted)) }
        if let target = rejoinRoom, target != room { commands.append(.join(target)) }
        if let token = options.token { commands.append(.auth(token)) }
        return commands
    }

    /// What a lost (or failed) connection leads to.
    package enum Loss: Equatable, Sendable {
        /// The very first connection failed: quit with this message.
        case quit(String)
        /// Connect again after the delay; `notice` is what to say meanwhile (nil: nothing).
        case reconnect(afterMilliseconds: Int, notice: String?)
    }

    /// Disconnect reasons that only say the server closed or is not there (yet).
    static let serverAwayReasons: Set<String> = ["connection refused", "the server closed the connection"]

    /// The connection closed or could not be made, for `reason`; `message` is what the client
    /// was saying (it may hold the server's reason for a refusal).
    package mutating func lost(_ reason: String, message: String?, options: PagerOptions) -> Loss {
        awaitingFirstLine = false
        if !greeted && options.quitIfFirstConnectionFails {
            let why = farewell ?? message ?? reason  // e.g. "server full" sent before the close
            return .quit("pagesync: cannot connect to \(options.server): \(why)")
        }
        attempts += 1
        connection = greeted ? .reconnecting(attempt: attempts) : .connecting
        // The server's own goodbye says more than a socket that found nobody there afterwards;
        // any other failure of a later attempt (a certificate the client does not trust, a
        // timeout) is what to act on: said first, the goodbye after it (a narrow status line
        // cuts the end), or it would stay hidden behind the goodbye.
        let notice: String? = if let farewell {
            reason.isEmpty || Self.serverAwayReasons.contains(reason) ? "server: \(farewell)" : "\(reason) · server: \(farewell)"
        } else {
            reason.isEmpty ? nil : reason
        }
        return .reconnect(afterMilliseconds: Int(reconnectWait.next(unitRandom: jitter.next())), notice: notice)
    }
}
