/// What a key does in the notes view.
package enum NotesAction: Equatable, Sendable {
    /// Turn the room to its next page.
    case next
    /// Turn the room back a page.
    case previous
    /// The room's first page.
    case first
    /// The room's last page.
    case last
    /// Scroll the notes by rows (negative: up).
    case scroll(Int)
    /// Scroll the notes half a screen down (or up).
    case scrollHalf(down: Bool)
    /// Restart the speaker's timer.
    case restartClock
    /// Show or hide the list of keys.
    case keys
    /// A key the notes view does not use.
    case unknown(Key)
}

/// The notes view's keys: those of a presentation remote (Page Down/Up, arrows), the pager's
/// `]` and `[`, and less's for scrolling (digits then Enter go to a page; q quits).
package enum NotesKeys {
    /// The action of `key` (digits and Enter are read by the model).
    package static func action(for key: Key) -> NotesAction {
        switch key {
        case .char("]"), .char(" "), .char("n"), .right, .pageDown: .next
        case .char("["), .char("p"), .backspace, .left, .pageUp: .previous
        case .home: .first
        case .end: .last
        case .char("j"), .down, .enter: .scroll(1)
        case .char("k"), .up: .scroll(-1)
        case .char("d"): .scrollHalf(down: true)
        case .char("u"): .scrollHalf(down: false)
        case .char("t"): .restartClock
        case .char("h"), .char("?"): .keys
        default: .unknown(key)
        }
    }

    /// The keys, one line each, for the on-screen list, `--help` and the man page.
    package static let summary = [
        "] Space n → PgDn   next page for the room      [ p ← PgUp Backspace   previous page",
        "Home End   first, last page     <digits> Enter   go to that page",
        "j k ↓ ↑   scroll the notes a line     d u   half a screen",
        "t   restart the timer     h ?   these keys     q   quit",
    ]
}
