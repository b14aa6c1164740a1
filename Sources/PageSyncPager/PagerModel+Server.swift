import PageSyncCore

/// The server's lines and the connection: greetings and the handshake after them, replies
/// matched to what was sent, pushed `PAGE` events, `BYE`, and reconnecting.
extension PagerModel {
    mutating func handleServer(_ msg: ServerMessage, _ fx: inout [PagerEffect]) {
        if let problem = session.notPagesync(msg) { return handleDisconnect(problem, &fx) }
        switch msg {
        case .multiline(let header, let lines, let truncated):
            guard !outstanding.isEmpty else { return }
            let expectation = outstanding.removeFirst()
            if case .piece(let key, let from) = expectation, header.words.first == "TEXT" {
                receivePiece(header, lines, cut: truncated, key: key, from: from)
            } else if case .who(let offset) = expectation, header.words.first == "WHO" {
                overlay?.whoArrived(header, lines: lines, offset: offset)
            } else if case .searchText(let key) = expectation, header.words.first == "TEXT" {
                let whole = !truncated && header.yesNo("truncated") != true
                searchTextArrived(lines, whole: whole, doc: header.fields["doc"] ?? key.doc, for: key, &fx)
            } else if case .text(let key) = expectation, header.words.first == "TEXT", !truncated,
                      header.yesNo("truncated") == true, header.fields["from"] == nil, let bytes = header.int("bytes"),
                      header.fields["doc"].map({ $0 == key.doc }) ?? true, header.int("page").map({ $0 == key.page }) ?? true {
                rememberFirstLine(header, for: key)
                startLongPage(key, bytes: bytes)
            } else if case .text(let key) = expectation, header.words.first == "TEXT" {
                var content = lines
                if truncated || header.yesNo("truncated") == true {
                    content.append("[this page is longer than the server sends: it was cut here]")
                }
                rememberFirstLine(header, for: PageKey(doc: header.fields["doc"] ?? key.doc, page: header.int("page") ?? key.page))
                storeText(content, for: PageKey(doc: header.fields["doc"] ?? key.doc,
                                                page: header.int("page") ?? key.page))
            }
            flush(&fx)
        case .line(let line):
            switch line.kind {
            case .hello: handleHello(line, &fx)
            case .page:
                reconcile(line)
            case .ok, .error:
                guard !outstanding.isEmpty else {
                    // An ERR nobody asked for (`ERR 503 server full` before a greeting) is the server's
                    // reason for closing: kept like a BYE, so the refused reconnects after it do not hide it.
                    if line.kind == .error {
                        session.farewell = line.text
                        notice(line.text)
                    }
                    return
                }
                handleReply(line, to: outstanding.removeFirst(), &fx)
                flush(&fx)
                flushFocus(&fx)
            case .other where line.head == "AUDIENCE":
                audienceArrived(line)
            case .other where line.head == "HAND":
                handUp = false
                notice("your hand was lowered" + ((line.by ?? nil).map { " by \($0)" } ?? ""))
            case .bye:
                session.farewell = line.text
                notice("server: " + line.text)
            case .other:
                break
            }
        }
    }

    private mutating func handleHello(_ line: WireLine, _ fx: inout [PagerEffect]) {
        guard let view = RoomUpdates.fullView(line, control: line.yesNo("control") ?? true) else {
            notice("unexpected greeting from the server")
            return
        }
        let handshake = session.greeting(room: view.name, name: line.fields["name"], options: options)
        keepAlive.greeted(idleSeconds: line.int("idle"))
        viewReported = .follow  // a new session: the server counts it following, hand down
        handUp = false
        audience = nil
        outstanding = []
        turns.reset()
        focusRequests.reset()
        message = nil
        takeWhole(view)
        clientName = line.fields["name"]
        for command in handshake {
            fx.append(.send(command))
            switch command {
            case .name: outstanding.append(.name)
            case .join: outstanding.append(.join)
            default: outstanding.append(.auth)
            }
        }
    }

    private mutating func handleReply(_ line: WireLine, to expectation: ReplyExpectation, _ fx: inout [PagerEffect]) {
        switch expectation {
        case .navigation:
            let code = line.kind == .ok ? nil : line.errorCode
            if code == nil || code == 409 || code == 416 { reconcile(line, ours: code == nil) }
            let request = turns.answered(errorCode: code, roomPage: room?.page)
            switch code {
            case nil:
                if let request, request.intent.pull, let room, room.page == request.target,
                   mode == .detached(viewPage: request.target) {
                    setView(.following)
                }
            case 409?:
                break
            case 403?:
                room?.control = false
                notice(line.text)
            default:
                notice(line.text)
            }
        case .piece(let key, _):
            if line.kind == .error { pieceFailed(key, because: line.text) }
        case .text(let key):
            if line.kind == .error {
                storeText(["[page \(key.page) could not be loaded: \(line.text)]"], for: key)
                notice(line.text)
            }
        case .searchText:
            if line.kind == .error { stopDocumentSearch(because: line.text) }
        case .focus(let page):
            focusAnswered(line, page: page, &fx)
        case .presence, .who, .keepAlive:
            if line.kind == .error { notice(line.text) }
        case .name:
            if line.kind == .ok { clientName = line.words.dropFirst().first ?? clientName }
            else { notice(line.text) }
        case .join:
            if line.kind == .ok, let view = RoomUpdates.fullView(line, control: line.yesNo("control") ?? true) {
                viewReported = .follow  // the new room counts this member following, hand down
                handUp = false
                audience = nil
                takeWhole(view)
            } else {
                notice(line.text)
            }
        case .auth:
            if line.kind == .ok {
                room?.control = line.yesNo("control") ?? true
            } else {
                notice(line.text)
            }
        case .status:
            guard line.kind == .ok else {
                edge.reset()
                notice(line.text)
                return
            }
            if let title = line.fields["title"] { room?.title = WireText.percentDecoded(title) }
            readersCounted(line.int("clients") ?? 2, &fx)
        }
    }

    mutating func handleDisconnect(_ reason: String, _ fx: inout [PagerEffect]) {
        if session.greeted, resume == nil, let room, let key = displayKey, let line = readingLine() {
            resume = ResumePlace(room: room.name, key: key, line: line, sideways: sidewaysShift,
                                 roomLine: room.line, roomMark: room.mark)
        }
        edge.reset()
        keepAlive.disconnected()
        documentSearch = nil  // its pages were asked on the lost connection
        turns.reset()
        focusRequests.reset()
        outstanding = []
        texts.forgetRequests()
        longPage?.window.forgetRequest()
        assembler.reset()
        switch session.lost(reason, message: message, options: options) {
        case .quit(let why):
            fx.append(.quit(status: 1, message: why))
        case .reconnect(let delay, let said):
            notice(said)
            fx.append(.connect(afterMilliseconds: delay))
        }
    }

    /// A new session's state: taken whatever its version. Back in the room you were reading when
    /// the connection dropped, on the same page, the screen goes back to where it was: the same
    /// line at the top and, chopped, the same columns; on an edited document, the same line
    /// (the last screen when the page is shorter now).
    private mutating func takeWhole(_ view: RoomView) {
        let old = displayKey
        let before = room
        let sameRoom = room?.name == view.name
        let top = sameRoom ? readingLine() : nil
        room = view
        clampView()
        afterStateChange(from: old)
        if let top { keepLine(top, from: old) }
        guard let place = resume else {
            // A new room, or the room's line or mark moved: the screen goes there.
            if !sameRoom || before?.page != view.page || before?.line != view.line || before?.mark != view.mark {
                roomFocusMoved(from: sameRoom ? before : nil)
            }
            return
        }
        guard place.room == view.name else { return }  // a room passed through on the way back
        resume = nil
        guard let key = displayKey, key.page == place.key.page else { return }
        // The room's line or mark moved while the connection was down: follow it.
        guard view.line == place.roomLine, view.mark == place.roomMark else { return roomFocusMoved(from: nil) }
        kept = (key, .line(place.line))
        if key.doc == place.key.doc { sidewaysShift = place.sideways }
        restoreKept()
    }

    /// Applies a versioned line (see ``RoomUpdates/reconciled(_:with:)``).
    mutating func reconcile(_ line: WireLine, ours: Bool = false) {
        guard let current = room, let r = RoomUpdates.reconciled(current, with: line) else { return }
        let old = displayKey
        let top = readingLine()
        room = r
        clampView()
        afterStateChange(from: old)
        if let top { keepLine(top, from: old) }
        if current.page != r.page { wandererReturns(ours: ours || (r.by != nil && r.by == clientName)) }
        roomFocusMoved(from: current, ours: ours)
    }

    private mutating func clampView() {
        guard let room, case .detached(let v) = mode else { return }
        mode = .detached(viewPage: min(max(1, v), room.pageCount))
    }
}
