import PageSyncCore

/// The speaker's notes view (`pagesync --notes`): a pure state machine like ``PagerModel``,
/// from ``PagerEvent``s to ``PagerEffect``s, that follows a room and shows, in place of the
/// page, the current page's speaker notes, the next page's heading, page n of N, the time
/// since the talk began and the clock; its keys turn the room's page.
///
/// ## Truth comes from the server
/// The room is reconciled by the same rules as the pager's (``RoomUpdates``). The notes on
/// screen are always those of the room's current page: when the room's page (or document)
/// changes, the old notes go and `NOTES <page>` is asked once; a reply for a page the room has
/// left since is not shown. So a page turn costs one `NOTES` request, and an idle room none.
/// The next page's heading comes from `TEXT <next>`, asked once per page and document and kept.
///
/// ## Control
/// Notes are for those with control. After each greeting the view sends `NAME`, `JOIN` and
/// `AUTH` as the pager does; once they are answered, a view without control quits with one
/// line that says why (as it does when `AUTH`, `JOIN` or `NOTES` is refused).
///
/// ## Turning pages
/// One request in flight, presses meanwhile added up (``PageTurnQueue``), exactly as in the
/// pager; the screen changes only when the room says so.
public struct NotesViewModel: TerminalModel {
    // MARK: Public read-only state

    /// The room as last heard from the server (nil before the first greeting).
    public internal(set) var room: RoomView?
    /// The connection as shown to people.
    public var connection: ConnectionState { session.connection }
    /// The terminal size.
    public internal(set) var size: TerminalSize
    /// The message on the status line (an error, a hint), if any.
    public internal(set) var message: String?
    /// How many `NOTES` requests were sent (one per page turn; none while idle).
    public internal(set) var notesRequests = 0
    /// The clock ticks once a second.
    public var tickMilliseconds: UInt64? { 1000 }

    // MARK: Internal state (used by the extensions in the other NotesViewModel+ files)

    let options: PagerOptions
    /// The greeting check, the handshake, the server's parting words and reconnecting.
    var session: ServerSession
    var outstanding: [NotesExpectation] = []
    var assembler = ReplyAssembler()
    var turns = PageTurnQueue()
    /// The notes on screen: whose page, rendered to lines (nil while they are asked for).
    var notes: (key: PageKey, lines: [String])?
    /// The page whose notes were asked for and not answered yet.
    var notesAsked: PageKey?
    /// The next pages' headings, by page of the document (cleared when the document changes).
    var headlines: [PageKey: String] = [:]
    var headlinesAsked: Set<PageKey> = []
    /// How far the notes are scrolled down, in rows.
    var scroll = 0
    /// Digits typed before Enter: a page to go to.
    var typedPage: String?
    var showingKeys = false
    var clock = SpeakerClock()
    var now: ClockReading?
    /// When to send a `PING` so that a daemon with `idle-timeout` keeps the connection.
    var keepAlive = KeepAlive(tickMilliseconds: 1000)

    /// A view in state "connecting"; the shell starts connecting right away.
    public init(options: PagerOptions) {
        self.options = options
        self.size = options.size
        self.session = ServerSession(seed: options.randomSeed)
    }

    /// The most headings kept (a long deck's; the oldest go first past this).
    static let maxHeadlines = 512

    // MARK: Events

    /// Applies one event; returns what the shell must do, in order (at most one repaint, last).
    public mutating func handle(_ event: PagerEvent) -> [PagerEffect] {
        // A tick first sends the `PING` that keeps the connection (when due), then shows the time.
        var fx: [PagerEffect] = []
        if case .tick(let reading) = event, keepAlive.tick(reading.monotonicMilliseconds),
           connection == .connected, session.greeted {
            outstanding.append(.keepAlive)
            fx.append(.send(.ping(nil)))
        }
        let applied = apply(event)
        keepAlive.sent(in: applied)
        return fx + applied
    }

    private mutating func apply(_ event: PagerEvent) -> [PagerEffect] {
        var fx: [PagerEffect] = []
        var clear = false
        switch event {
        case .key(let key):
            handleKey(key, &fx, &clear)
        case .serverLine(let line):
            if let msg = assembler.feed(line) { handleServer(msg, &fx) }
        case .connected:
            assembler.reset()
            outstanding = []
            session.connected()
        case .disconnected(let reason):
            handleDisconnect(reason, &fx)
        case .resized(let newSize):
            size = newSize
            clampScroll()
            clear = true
        case .resumed:
            clear = true
        case .tick(let reading):
            now = reading
            clock.ticked(now: reading.monotonicMilliseconds)
        }
        if fx.contains(where: { if case .quit = $0 { true } else { false } }) { return fx }
        fx.append(clear ? .clearAndRepaint : .repaint)
        return fx
    }

    // MARK: Keys

    private mutating func handleKey(_ key: Key, _ fx: inout [PagerEffect], _ clear: inout Bool) {
        switch key {
        case .ctrl("c"), .char("q"), .char("Q"): fx.append(.quit(status: 0, message: nil)); return
        case .ctrl("z"): fx.append(.suspend); return
        case .ctrl("l"): clear = true; return
        default: break
        }
        if case .char(let c) = key, c.isASCII, c.isNumber {
            typedPage = (typedPage ?? "") + String(c)
            message = nil
            return
        }
        if let typed = typedPage {
            typedPage = nil
            switch key {
            case .enter:
                guard let n = Int(typed), n >= 1 else { message = "page numbers start at 1"; return }
                return turn(NavigationIntent(base: .page(n), offset: 0), &fx)
            case .escape, .backspace:
                return
            default:
                break
            }
        }
        message = nil
        switch NotesKeys.action(for: key) {
        case .next: turn(NavigationIntent(base: .current, offset: 1), &fx)
        case .previous: turn(NavigationIntent(base: .current, offset: -1), &fx)
        case .first: turn(NavigationIntent(base: .first, offset: 0), &fx)
        case .last: turn(NavigationIntent(base: .last, offset: 0), &fx)
        case .scroll(let rows): scroll += rows; clampScroll()
        case .scrollHalf(let down): scroll += (down ? 1 : -1) * max(1, notesHeight / 2); clampScroll()
        case .restartClock: clock.restart(now: now?.monotonicMilliseconds); message = "timer restarted"
        case .keys: showingKeys.toggle()
        case .unknown(let key): message = "\(ReaderKeys.name(of: key)): not a notes view key (h lists them)"
        }
    }

    private mutating func turn(_ press: NavigationIntent, _ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        guard connection == .connected else { message = "not connected: page turns need the server"; return }
        if case .page(let n) = press.base, n > room.pageCount {
            message = "no page \(n): this document has \(room.pageCount) pages"
            return
        }
        turns.press(press)
        flush(&fx)
    }

    var handshakePending: Bool { outstanding.contains { $0.holdsNavigation } }

    /// Sends the queued page turn if nothing is in flight and the handshake is done.
    mutating func flush(_ fx: inout [PagerEffect]) {
        guard turns.queued != nil, let room, connection == .connected, !handshakePending else { return }
        switch turns.flush(room: room) {
        case .send(let command):
            outstanding.append(.navigation)
            fx.append(.send(command))
        case .nowhere(_, let edgeMessage):
            if let edgeMessage { message = edgeMessage }
        case .nothing:
            break
        }
    }

    /// The rows the notes have (the screen less the title, the next page's line and the status line).
    var notesHeight: Int { max(0, size.rows - 3 - (showingKeys ? NotesScreen.keyRows.count : 0)) }

    mutating func clampScroll() {
        let rows = NotesScreen.noteRows(notes?.lines ?? [], width: size.columns, colors: options.colors).count
        scroll = min(max(0, scroll), Layout.maxOffset(rowCount: rows, height: notesHeight))
    }

    /// The whole screen (see ``NotesScreen``).
    public mutating func frame() -> String {
        NotesScreen(model: self).render()
    }
}

/// What the notes view expects the next reply from the server to answer.
enum NotesExpectation: Equatable, Sendable {
    case navigation
    case notes(PageKey)
    case headline(PageKey)
    case name
    case join
    case auth
    /// `PING` sent to keep the connection from being closed as idle (``KeepAlive``).
    case keepAlive

    /// The answers that hold page turns and notes until the session is set up (`JOIN`, `AUTH`).
    var holdsNavigation: Bool { self == .join || self == .auth }
}
