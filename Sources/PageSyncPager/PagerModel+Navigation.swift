/// Page turns: asking the room (one request in flight, presses accumulated), browsing on your
/// own when detached or without control, the second press at an edge, follow, detach and pull.
extension PagerModel {
    /// Space at the end of the page, or b at its top (see ``EdgeGuard``).
    mutating func pressAtEdge(_ direction: EdgeGuard.Direction, _ fx: inout [PagerEffect]) {
        let press = Intent(base: .current, offset: direction == .forward ? 1 : -1)
        guard let key = displayKey, let room else { return navigate(press, &fx) }
        if NavigationRequests.resolve(press, current: key.page, room: room) == nil {  // nowhere to go: says why
            edge.reset()
            return navigate(press, &fx)
        }
        switch edge.press(direction, at: key, guarded: edgeGuarded && connection == .connected) {
        case .turn(let direction):
            turn(at: direction, &fx)
        case .ask:
            outstanding.append(.status)
            fx.append(.send(.status))
            message = direction == .forward ? "end of page \(key.page)" : "top of page \(key.page)"
        case .wait, .warn:
            break
        }
    }

    /// The server said how many read here (`STATUS`'s `clients=`).
    mutating func readersCounted(_ readers: Int, _ fx: inout [PagerEffect]) {
        guard let decision = edge.answered(readers: readers, showing: displayKey), let page = displayedPage else { return }
        switch decision {
        case .turn(let direction):
            turn(at: direction, &fx)
        case .warn(.forward, let readers):
            notice("Space again turns the page for everyone (\(readers) readers)")
        case .warn(.backward, let readers):
            notice("b again turns back to page \(max(1, page - 1)) for everyone (\(readers) readers)")
        case .ask, .wait:
            break
        }
    }

    /// Turns the page at an edge; turning back, the previous page opens at its end.
    private mutating func turn(at direction: EdgeGuard.Direction, _ fx: inout [PagerEffect]) {
        let press = Intent(base: .current, offset: direction == .forward ? 1 : -1)
        if direction == .backward, let room, let page = displayedPage {
            landingAtEnd = NavigationRequests.resolve(press, current: page, room: room)
        }
        message = nil  // "end of page 3" while the question was out
        navigate(press, &fx)
    }

    mutating func navigate(_ press: Intent, _ fx: inout [PagerEffect]) {
        guard let room else { notice("not connected yet"); return }
        if case .detached(let view) = mode {
            browseLocally(from: view, press, room)
            return
        }
        if !mayTurn {
            mode = .detached(viewPage: room.page)
            browseLocally(from: room.page, press, room)
            if message == nil {
                message = options.followOnly ? "follower only (--follow): browsing on your own"
                    : "no control here: browsing on your own"
            }
            return
        }
        guard connection == .connected else { notice("not connected: page turns need the server"); return }
        turns.press(press)
        flush(&fx)
    }

    private mutating func browseLocally(from view: Int, _ press: Intent, _ room: RoomView) {
        guard let target = NavigationRequests.resolve(press, current: view, room: room) else {
            message = NavigationRequests.edgeMessage(press, current: view, room: room)
            return
        }
        guard target <= room.pageCount else {
            message = "no page \(target): this document has \(room.pageCount) pages"
            return
        }
        setView(.detached(viewPage: target))
    }

    private var handshakePending: Bool { outstanding.contains { $0.holdsNavigation } }

    /// Sends the pending intent if nothing is in flight and the state allows it.
    mutating func flush(_ fx: inout [PagerEffect]) {
        guard turns.queued != nil, let room, connection == .connected, !handshakePending else { return }
        guard mayTurn else { turns.replaceQueued(with: nil); return }
        switch turns.flush(room: room) {
        case .send(let command):
            outstanding.append(.navigation)
            fx.append(.send(command))
        case .nowhere(let intent, let edgeMessage):
            if intent.pull, case .detached(let v) = mode, v == room.page { setView(.following) }
            if let edgeMessage { message = edgeMessage }
        case .nothing:
            break
        }
    }

    mutating func follow(_ fx: inout [PagerEffect]) {
        guard case .detached = mode else {
            if roomLineElsewhere() != nil || ownScroll { showRoomFocus(); message = "back at the room's line" }
            else { message = "already following the room" }
            return
        }
        pinned = false
        setView(.following)
        showRoomFocus()
    }

    mutating func detach() {
        guard let room else { message = "not connected yet"; return }
        pinned = true  // only D pins a reader away; the room's page turns bring others back
        guard mode == .following else { return }
        mode = .detached(viewPage: room.page)
        message = mayTurn ? "p: pull the room here" : nil
    }

    mutating func pull(_ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        guard !options.followOnly else { message = "follower only (--follow): this pager never moves the room"; return }
        guard room.control else { message = "pulling the room needs control (start pagesync with --token)"; return }
        guard connection == .connected else { message = "not connected: pulling needs the server"; return }
        guard case .detached(let view) = mode else { return pullLine(&fx) }
        turns.replaceQueued(with: Intent(base: .page(view), offset: 0, pull: true))
        flush(&fx)
    }
}
