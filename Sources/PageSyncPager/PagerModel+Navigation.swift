/// Page turns: asking the room (one request in flight, presses accumulated), browsing on your
/// own when detached or without control, follow, detach and pull.
extension PagerModel {
    mutating func navigate(_ press: Intent, _ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
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
        guard connection == .connected else { message = "not connected: page turns need the server"; return }
        queued = NavigationRequests.combine(queued, press)
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
        guard inFlight == nil, let intent = queued, let room, connection == .connected, !handshakePending else { return }
        guard mayTurn else { queued = nil; return }
        queued = nil
        guard let target = NavigationRequests.resolve(intent, current: room.page, room: room) else {
            if intent.pull, case .detached(let v) = mode, v == room.page { setView(.following) }
            if let m = NavigationRequests.edgeMessage(intent, current: room.page, room: room) { message = m }
            return
        }
        let command = NavigationRequests.command(for: intent, target: target, version: room.version)
        inFlight = NavigationRequest(intent: intent, command: command, basePage: room.page, target: target)
        outstanding.append(.navigation)
        fx.append(.send(command))
    }

    mutating func follow(_ fx: inout [PagerEffect]) {
        guard case .detached = mode else { message = "already following the room"; return }
        setView(.following)
    }

    mutating func detach() {
        guard let room else { message = "not connected yet"; return }
        guard mode == .following else { return }
        mode = .detached(viewPage: room.page)
        message = mayTurn ? "p: pull the room here" : nil
    }

    mutating func pull(_ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        guard case .detached(let view) = mode else { message = "you are on the room's page"; return }
        guard !options.followOnly else { message = "follower only (--follow): this pager never moves the room"; return }
        guard room.control else { message = "pulling the room needs control (start pagesync with --token)"; return }
        guard connection == .connected else { message = "not connected: pulling needs the server"; return }
        queued = Intent(base: .page(view), offset: 0, pull: true)
        flush(&fx)
    }
}
