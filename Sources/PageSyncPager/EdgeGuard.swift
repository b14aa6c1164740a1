/// The rule that keeps an open room from moving by accident: Space at the end of a page (b at
/// its top), in a room where everyone may turn pages and others are reading, first shows the end
/// and says what the next press does; only a second press, with nothing else in between, turns
/// the page for everyone.
///
/// Whether others are reading is asked of the server at the moment it matters (`STATUS`'s
/// `clients=`), never taken from an old count: someone who joined a minute ago counts. In a room
/// of one the first press turns the page once the answer is in. A guard that does not apply
/// (following nobody's page but your own, a presenter with control driving, no control at all)
/// turns at once.
package struct EdgeGuard: Equatable, Sendable {
    /// Which edge.
    package enum Direction: Equatable, Sendable {
        /// The end of the page (Space, f, PgDn).
        case forward
        /// The top of the page (b, PgUp).
        case backward
    }

    /// Where the guard stands.
    package enum State: Equatable, Sendable {
        /// Nothing pressed at an edge.
        case idle
        /// A press at this edge of this page; the server was asked how many read here.
        case asking(Direction, PageKey)
        /// The reader was told; the next press at this edge of this page turns it.
        case armed(Direction, PageKey, readers: Int)
    }

    /// What to do about a press, or an answer.
    package enum Decision: Equatable, Sendable {
        /// Turn the page in that direction now.
        case turn(Direction)
        /// Ask the server how many read here (`STATUS`).
        case ask
        /// Nothing yet: the answer is on its way.
        case wait
        /// Tell the reader the next press turns the page for `readers` readers.
        case warn(Direction, readers: Int)
    }

    /// Where the guard stands.
    package private(set) var state = State.idle

    /// A guard with nothing pressed.
    package init() {}

    /// A press at the `direction` edge of page `key`; `guarded` says whether the rule applies
    /// (an open room, following it, with control to turn it).
    package mutating func press(_ direction: Direction, at key: PageKey, guarded: Bool) -> Decision {
        guard guarded else {
            state = .idle
            return .turn(direction)
        }
        switch state {
        case .armed(direction, key, _):
            state = .idle
            return .turn(direction)
        case .asking(direction, key):
            return .wait
        default:
            state = .asking(direction, key)
            return .ask
        }
    }

    /// The server says `readers` clients are in the room, the page on screen being `key`. Nil
    /// when nothing was asked, or the page changed meanwhile (the guard lets go).
    package mutating func answered(readers: Int, showing key: PageKey?) -> Decision? {
        guard case .asking(let direction, let asked) = state else { return nil }
        guard asked == key else {
            state = .idle
            return nil
        }
        if readers <= 1 {
            state = .idle
            return .turn(direction)
        }
        state = .armed(direction, asked, readers: readers)
        return .warn(direction, readers: readers)
    }

    /// The question could not be answered (an error, the connection dropped): the guard lets go.
    package mutating func reset() { state = .idle }

    /// Whether the guard waits for an answer.
    package var isAsking: Bool { if case .asking = state { true } else { false } }
}
