import PageSyncCore

/// The `LINE` and `MARK` a pager asks of its room: at most one in flight, and only the newest
/// wish of each kind waiting (a held key sends a line when the previous reply arrives, never a
/// backlog; the last position always wins). Like ``PageTurnQueue`` for pages.
package struct FocusRequests: Equatable, Sendable {
    /// What was sent and is not answered yet.
    package private(set) var inFlight: Command?
    /// The line wished for and not sent yet.
    package private(set) var line: Int?
    /// The mark wished for and not sent yet (`.some(nil)`: clear it).
    package private(set) var mark: LineRange??

    /// Nothing in flight, nothing waiting.
    package init() {}

    /// Wants the room's line to be `line` (replacing an earlier wish).
    package mutating func want(line: Int) { self.line = line }

    /// Wants the room's mark to be `mark` (nil: none), replacing an earlier wish.
    package mutating func want(mark: LineRange?) { self.mark = .some(mark) }

    /// Forgets the wishes not sent (the page changed under them).
    package mutating func dropWaiting() {
        line = nil
        mark = nil
    }

    /// Forgets everything (the connection was lost).
    package mutating func reset() {
        inFlight = nil
        dropWaiting()
    }

    /// The next command for `room`, unless one is in flight: the mark first, then the line, each
    /// only when it would change the room, conditional on the room's version.
    package mutating func next(room: RoomView) -> Command? {
        guard inFlight == nil else { return nil }
        if let wished = mark {
            mark = nil
            if wished != room.mark {
                inFlight = .mark(wished, ifVersion: room.version)
                return inFlight
            }
        }
        if let wished = line {
            line = nil
            if wished != room.line {
                inFlight = .line(wished, ifVersion: room.version)
                return inFlight
            }
        }
        return nil
    }

    /// The reply to the command in flight: `errorCode` nil for `OK`; `samePage` whether the room
    /// is still on the page the command was for. A refusal is not asked again: after an `ERR 409`
    /// someone else's line or mark is the room's, and the screens (this one too) follow it; the
    /// next scroll asks from there. Wishes for a page the room left are dropped.
    package mutating func answered(errorCode: Int?, samePage: Bool) {
        inFlight = nil
        if !samePage { dropWaiting() }
    }
}
