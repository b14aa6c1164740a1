/// What the pager expects the next reply from the server to answer, in the order commands were sent.
enum ReplyExpectation: Sendable {
    /// A page turn (`NEXT`, `PREV`, `FIRST`, `LAST`, `GOTO`).
    case navigation
    /// `TEXT` of this page.
    case text(PageKey)
    /// `TEXT <n> FROM <from>`: a piece of a long page.
    case piece(PageKey, from: Int)
    /// `NAME`.
    case name
    /// `JOIN`.
    case join
    /// `AUTH`.
    case auth
    /// `STATUS`: how many read here, for the ``EdgeGuard``.
    case status
    /// `TEXT` of a page searched by a ``DocumentSearch`` (not shown).
    case searchText(PageKey)
    /// `LINE` or `MARK`, asked on this page of the room.
    case focus(page: Int)
    /// `VIEW` or `HAND`: presence, nothing to take from the reply.
    case presence
    /// `WHO <offset>` for the audience overlay.
    case who(offset: Int)
    /// `PING` sent to keep the connection from being closed as idle (``KeepAlive``).
    case keepAlive

    /// Whether this is the answer to a part of the greeting handshake that holds navigation (`JOIN`, `AUTH`).
    var holdsNavigation: Bool {
        switch self {
        case .join, .auth: true
        default: false
        }
    }
}
