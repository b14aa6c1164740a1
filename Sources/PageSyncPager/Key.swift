/// One key press as the pager understands it, decoded from the terminal's bytes.
///
/// Keys that carry modifiers the pager does not use (Shift/Alt/Ctrl with arrows,
/// function keys, mouse reports) never appear: ``KeyDecoder`` drops them.
public enum Key: Hashable, Sendable {
    /// A printable character (one Unicode scalar, as typed).
    case char(Character)
    /// Enter / Return (CR or LF).
    case enter
    /// Backspace (DEL 0x7F or BS 0x08).
    case backspace
    /// Tab (0x09).
    case tab
    /// A lone Escape key press (reported only after ``KeyDecoder/timeout()``
    /// or when the next byte cannot continue an escape sequence).
    case escape
    /// Arrow up.
    case up
    /// Arrow down.
    case down
    /// Arrow left.
    case left
    /// Arrow right.
    case right
    /// Page Up.
    case pageUp
    /// Page Down.
    case pageDown
    /// Home.
    case home
    /// End.
    case end
    /// A control character, named by its lowercase letter or symbol:
    /// Ctrl-C is `.ctrl("c")` (0x03), Ctrl-L `.ctrl("l")`, Ctrl-Z `.ctrl("z")`,
    /// 0x00 is `.ctrl("@")`, 0x1C...0x1F are `.ctrl("\\")`, `.ctrl("]")`, `.ctrl("^")`, `.ctrl("_")`.
    case ctrl(Character)
}
