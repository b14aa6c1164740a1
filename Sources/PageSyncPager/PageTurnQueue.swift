import PageSyncCore

/// At most one page turn in flight, and what was pressed meanwhile: the request half of the
/// page-turning rules (``NavigationRequests`` holds the arithmetic). The pager and the notes
/// view both turn the room's page through one.
///
/// Presses made while a request is out add up into one queued intent; when the reply comes,
/// the next request is computed from the fresh state (``flush(room:)``), so a held key neither
/// loses nor doubles presses. An `ERR 409` (someone moved the room first) keeps a relative
/// press only if the room is still on the page it started from, and always keeps an absolute
/// one (it is asked again from the fresh state): two people pressing next on the same page
/// move the room once.
package struct PageTurnQueue: Equatable, Sendable {
    /// The request in flight, as sent.
    package private(set) var inFlight: NavigationRequest?
    /// The presses not sent yet, added up.
    package private(set) var queued: NavigationIntent?

    /// Nothing in flight, nothing queued.
    package init() {}

    /// What ``flush(room:)`` decided.
    package enum Flush: Equatable, Sendable {
        /// Send this command (now in flight).
        case send(Command)
        /// The queued intent leads nowhere from the room's page (it was dropped): at an end of a
        /// room that stops there (`edgeMessage` says so), or already there.
        case nowhere(NavigationIntent, edgeMessage: String?)
        /// Nothing to send: nothing queued, or a request is still in flight.
        case nothing
    }

    /// A press: added to what is queued (see ``NavigationRequests/combine(_:_:)``).
    package mutating func press(_ intent: NavigationIntent) {
        queued = NavigationRequests.combine(queued, intent)
    }

    /// Replaces what is queued (a pull asks for one page, whatever was pressed before).
    package mutating func replaceQueued(with intent: NavigationIntent?) {
        queued = intent
    }

    /// Forgets the request in flight and the queued presses (the connection was lost or a new
    /// session began: their fate is unknown, and the next greeting tells the truth).
    package mutating func reset() {
        inFlight = nil
        queued = nil
    }

    /// The next request for what is queued, from the room's current state, unless one is in flight.
    package mutating func flush(room: RoomView) -> Flush {
        guard inFlight == nil, let intent = queued else { return .nothing }
        queued = nil
        guard let target = NavigationRequests.resolve(intent, current: room.page, room: room) else {
            return .nowhere(intent, edgeMessage: NavigationRequests.edgeMessage(intent, current: room.page, room: room))
        }
        let command = NavigationRequests.command(for: intent, target: target, version: room.version)
        inFlight = NavigationRequest(intent: intent, command: command, basePage: room.page, target: target)
        return .send(command)
    }

    /// The reply to the request in flight: `errorCode` nil for `OK`, and the room's page once the
    /// reply's state is taken. Returns the request it answered. `ERR 409` queues the request
    /// again when it still makes sense (see the type's comment); `OK` and `ERR 416` keep the
    /// queue; any other error drops it (no control, the server refused).
    @discardableResult
    package mutating func answered(errorCode: Int?, roomPage: Int?) -> NavigationRequest? {
        let request = inFlight
        inFlight = nil
        switch errorCode {
        case nil, 416?:
            break
        case 409?:
            if let request {
                let absolute = request.intent.base != .current || request.intent.pull
                if absolute || roomPage == request.basePage {
                    queued = NavigationRequests.combine(request.intent, queued ?? NavigationIntent(base: .current, offset: 0))
                }
            }
        default:
            queued = nil
        }
        return request
    }
}
