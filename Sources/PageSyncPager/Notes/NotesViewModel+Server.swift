import PageSyncCore

/// The server's lines and the connection: the greeting and the handshake after it, the check
/// for control, replies matched to what was sent, pushed `PAGE` events, `BYE`, reconnecting,
/// and asking for the notes and the next page's heading.
extension NotesViewModel {
    mutating func handleServer(_ msg: ServerMessage, _ fx: inout [PagerEffect]) {
        if let problem = session.notPagesync(msg) { return handleDisconnect(problem, &fx) }
        switch msg {
        case .multiline(let header, let lines, let truncated):
            guard !outstanding.isEmpty else { return }
            switch outstanding.removeFirst() {
            case .notes(let key):
                notesArrived(key, header: header, lines, cut: truncated)
            case .headline(let key):
                headlinesAsked.remove(key)
                remember(PageHeadline.of(lines, markdown: rendersMarkdown) ?? "", for: key)
            default:
                break
            }
        case .line(let line):
            switch line.kind {
            case .hello: handleHello(line, &fx)
            case .page: reconcile(line, &fx)
            case .ok, .error:
                guard !outstanding.isEmpty else {
                    if line.kind == .error { session.farewell = line.text; message = line.text }
                    return
                }
                handleReply(line, to: outstanding.removeFirst(), &fx)
            case .bye:
                session.farewell = line.text
                message = "server: " + line.text
            case .other:
                break
            }
        }
        flush(&fx)
        fetch(&fx)
    }

    private var rendersMarkdown: Bool { options.markdown.rendersMarkdown(file: room?.file) }

    private mutating func handleHello(_ line: WireLine, _ fx: inout [PagerEffect]) {
        guard let view = RoomUpdates.fullView(line, control: line.yesNo("control") ?? true) else {
            message = "unexpected greeting from the server"
            return
        }
        let handshake = session.greeting(room: view.name, name: line.fields["name"], options: options)
        keepAlive.greeted(idleSeconds: line.int("idle"))
        outstanding = []
        turns.reset()
        notesAsked = nil
        headlinesAsked = []
        message = nil
        take(view)
        for command in handshake {
            fx.append(.send(command))
            switch command {
            case .name: outstanding.append(.name)
            case .join: outstanding.append(.join)
            default: outstanding.append(.auth)
            }
        }
        checkControl(&fx)
    }

    private mutating func handleReply(_ line: WireLine, to expectation: NotesExpectation, _ fx: inout [PagerEffect]) {
        switch expectation {
        case .navigation:
            let code = line.kind == .ok ? nil : line.errorCode
            if code == nil || code == 409 || code == 416 { reconcile(line, &fx) }
            turns.answered(errorCode: code, roomPage: room?.page)
            if code != nil && code != 409 { message = line.text }
            if code == 403 { quitWithoutControl(line.text, &fx) }
        case .notes(let key):
            notesAsked = notesAsked == key ? nil : notesAsked
            if line.errorCode == 403 { return quitWithoutControl(line.text, &fx) }
            if line.kind == .error { message = "notes of page \(key.page): " + line.text }
        case .headline(let key):
            headlinesAsked.remove(key)
            if line.kind == .error { remember("", for: key) }
        case .name, .keepAlive:
            if line.kind == .error { message = line.text }
        case .join:
            guard line.kind == .ok, let view = RoomUpdates.fullView(line, control: line.yesNo("control") ?? true) else {
                return fx.append(.quit(status: 1, message: "pagesync --notes: cannot join room \(session.rejoinRoom ?? "?"): \(line.text)"))
            }
            take(view)
            checkControl(&fx)
        case .auth:
            guard line.kind == .ok else {
                return fx.append(.quit(status: 1, message: "pagesync --notes: the server refused the token: \(line.text)"))
            }
            room?.control = line.yesNo("control") ?? true
            checkControl(&fx)
        }
    }

    /// Once `JOIN` and `AUTH` are answered: without control, the notes are not for this view.
    private mutating func checkControl(_ fx: inout [PagerEffect]) {
        guard !handshakePending, let room, !room.control else { return }
        let how = options.token == nil ? "give the room's token (--token, --token-file or PAGESYNC_TOKEN)"
            : "this token does not control it"
        quitWithoutControl("room \(room.name) is a presenter room: \(how)", &fx)
    }

    private mutating func quitWithoutControl(_ why: String, _ fx: inout [PagerEffect]) {
        fx.append(.quit(status: 1, message: "pagesync --notes: speaker notes need control of the room; \(why)"))
    }

    /// Asks for what the screen lacks: the current page's notes (once per page), the next page's heading.
    mutating func fetch(_ fx: inout [PagerEffect]) {
        guard let room, connection == .connected, !handshakePending, room.control else { return }
        let key = PageKey(doc: room.doc, page: room.page)
        if notes?.key != key, notesAsked != key {
            notesAsked = key
            notesRequests += 1
            outstanding.append(.notes(key))
            fx.append(.send(.notes(PageNumber(room.page))))
        }
        guard let next = nextPage(of: room) else { return }
        let nextKey = PageKey(doc: room.doc, page: next)
        if headlines[nextKey] == nil, !headlinesAsked.contains(nextKey) {
            headlinesAsked.insert(nextKey)
            outstanding.append(.headline(nextKey))
            fx.append(.send(.text(PageNumber(next))))
        }
    }

    /// The page after the room's (the first of a room that wraps; nil at the end of one that stops).
    func nextPage(of room: RoomView) -> Int? {
        if room.page < room.pageCount { return room.page + 1 }
        return room.wraps && room.pageCount > 1 ? 1 : nil
    }

    private mutating func notesArrived(_ key: PageKey, header: WireLine, _ lines: [String], cut: Bool) {
        if notesAsked == key { notesAsked = nil }
        guard let room, key == PageKey(doc: room.doc, page: room.page) else { return }  // the room moved on
        var shown = rendersMarkdown ? MarkdownRenderer.render(markdown: lines.joined(separator: "\n"), colors: options.colors) : lines
        if cut || header.yesNo("truncated") == true { shown.append("[these notes are longer than the server sends: cut here]") }
        notes = (key, shown)
        scroll = 0
    }

    private mutating func remember(_ headline: String, for key: PageKey) {
        if headlines.count >= Self.maxHeadlines { headlines.removeAll() }
        headlines[key] = headline
    }

    /// A new session's state, whatever its version.
    private mutating func take(_ view: RoomView) {
        let before = room
        room = view
        afterChange(from: before)
    }

    /// A versioned line (see ``RoomUpdates/reconciled(_:with:)``).
    private mutating func reconcile(_ line: WireLine, _ fx: inout [PagerEffect]) {
        guard let current = room, let r = RoomUpdates.reconciled(current, with: line) else { return }
        room = r
        afterChange(from: current)
    }

    private mutating func afterChange(from before: RoomView?) {
        guard let room else { return }
        if before?.doc != room.doc { headlines = [:] }
        if let key = notes?.key, key != PageKey(doc: room.doc, page: room.page) {
            notes = nil  // never the notes of another page
            scroll = 0
        }
        if let before {
            if before.page != room.page { clock.pageTurned(now: now?.monotonicMilliseconds) }
        } else {
            clock.roomSeen(page: room.page, now: now?.monotonicMilliseconds)
        }
    }

    mutating func handleDisconnect(_ reason: String, _ fx: inout [PagerEffect]) {
        turns.reset()
        keepAlive.disconnected()
        outstanding = []
        notesAsked = nil
        headlinesAsked = []
        assembler.reset()
        switch session.lost(reason, message: message, options: options) {
        case .quit(let why):
            fx.append(.quit(status: 1, message: why))
        case .reconnect(let delay, let said):
            message = said
            fx.append(.connect(afterMilliseconds: delay))
        }
    }
}
