/// Whether the pager shows the room's page or a page of its own choosing.
public enum FollowMode: Equatable, Sendable {
    /// The view is the room's page and moves whenever the room's page changes.
    case following
    /// The view stays on `viewPage` (1-based) whatever the room does, until you follow again.
    case detached(viewPage: Int)
}

/// The pager's connection to the server, as shown to people.
public enum ConnectionState: Equatable, Sendable {
    /// The first connection is being made (no greeting yet).
    case connecting
    /// Connected and greeted: the room state is live.
    case connected
    /// The connection dropped; `attempt` reconnection attempts have been scheduled so far.
    case reconnecting(attempt: Int)
}

/// The bottom line of the screen: where you are, where the room is, and what is going on.
///
/// Laid out as parts separated by ` · `, for example
/// `guide · page 3/12 ○ ○ ● ○ … ○ · following · by ann`, or when detached
/// `guide · page 5/12 ○ … ● … ○ · detached · room on 7/12 · F to follow`.
/// When the width is short, parts are dropped in this order: who turned the page, the room
/// name, the indicator; then the rest is cut with `…`. Text that came from the server (room
/// name, names, messages) is sanitized to plain text first.
public struct StatusLine: Equatable, Sendable {
    /// The room's name, or nil before the greeting.
    public var room: String?
    /// The page shown (1-based).
    public var page: Int
    /// The number of pages.
    public var pageCount: Int
    /// Follow or detached (detached shows where the room is).
    public var mode: FollowMode
    /// The room's own page (shown when detached).
    public var roomPage: Int
    /// The connection state ("connecting…" and "reconnecting…" are shown).
    public var connection: ConnectionState
    /// Who turned the room's page last, if anyone.
    public var by: String?
    /// A message for people: the last `ERR` text or a hint. Shown until replaced.
    public var message: String?

    /// A status line with every part given.
    public init(room: String?, page: Int, pageCount: Int, mode: FollowMode, roomPage: Int,
                connection: ConnectionState, by: String?, message: String?) {
        self.room = room
        self.page = page
        self.pageCount = pageCount
        self.mode = mode
        self.roomPage = roomPage
        self.connection = connection
        self.by = by
        self.message = message
    }

    /// The line as plain text (no control characters), at most `width` columns.
    public func render(width: Int) -> String {
        guard width > 0 else { return "" }
        let sep = " · "
        let connectionText: String? = switch connection {
        case .connecting: "connecting…"
        case .connected: nil
        case .reconnecting: "reconnecting…"
        }
        guard let room else {
            return Layout.truncate([connectionText ?? "connecting…", message.map(Self.clean)]
                .compactMap { $0 }.joined(separator: sep), toWidth: width)
        }
        let pageText = "page \(page)/\(pageCount)"
        let modeText: String = switch mode {
        case .following: "following"
        case .detached: "detached\(sep)room on \(roomPage)/\(pageCount)\(sep)F to follow"
        }
        let roomText = Self.clean(room)
        let byText = by.map { "by " + Self.clean($0) }
        let messageText = message.map(Self.clean)

        // Richest first; the indicator takes whatever room is left after the rest.
        let variants: [(room: Bool, by: Bool)] = [(true, true), (true, false), (false, false)]
        let wantedIndicator = min(2 * max(1, pageCount) - 1, 9)
        for v in variants {
            let tail = [modeText, connectionText, v.by ? byText : nil, messageText].compactMap { $0 }
            let head = (v.room ? roomText + sep : "") + pageText
            let fixed = DisplayWidth.of(head) + DisplayWidth.of(sep + tail.joined(separator: sep))
            let last = v.room == false
            if fixed + 1 + (last ? 1 : wantedIndicator) <= width {
                let indicator = PageIndicator.render(page: page, pageCount: pageCount, maxWidth: width - fixed - 1)
                return head + " " + indicator + sep + tail.joined(separator: sep)
            }
            if last {
                return Layout.truncate(([head] + tail).joined(separator: sep), toWidth: width)
            }
        }
        return ""
    }

    private static func clean(_ s: String) -> String {
        Sanitizer.plainText(s)
    }
}
