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

/// The bottom line of the screen: where you are, where the room is, who you are, and what is going on.
///
/// Laid out as parts separated by ` · `, for example
/// `guide · page 3/12 ○ ○ ● ○ … ○ · following · lines 1-23/41 56% more↓ · by bob · you: ann ⚑`,
/// or when detached `guide · page 5/12 ○ … ● … ○ · detached · room on 7/12 · F to follow`.
/// `⚑` marks that you have control (your page turns move the room). With `--tls-insecure` the
/// line starts with `TLS NOT VERIFIED`, which is never dropped (only cut by a very narrow screen).
/// When the width is short, parts are dropped in this order: who turned the page, your name;
/// then the message is cut (at a word boundary, with `…`), then the room name and the position
/// in the page go; the indicator shrinks to what is left. Cuts never fall inside a word
/// when a word boundary leaves something before them.
/// Text that came from the server (room name, names, messages) is sanitized to plain text first.
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
    /// Where the screen is within a page that does not fit it (nil: the page fits, or is not loaded).
    public var position: PagePosition?
    /// Your own name as the server knows it (nil: not known yet).
    public var me: String?
    /// Whether your page turns move the room (marked `⚑` after your name).
    public var control: Bool
    /// The connection is TLS without certificate checks (`--tls-insecure`): said first, always.
    public var unverifiedTLS: Bool

    /// A status line with every part given.
    public init(room: String?, page: Int, pageCount: Int, mode: FollowMode, roomPage: Int,
                connection: ConnectionState, by: String?, message: String?, position: PagePosition? = nil,
                me: String? = nil, control: Bool = false, unverifiedTLS: Bool = false) {
        self.room = room
        self.page = page
        self.pageCount = pageCount
        self.mode = mode
        self.roomPage = roomPage
        self.connection = connection
        self.by = by
        self.message = message
        self.position = position
        self.me = me
        self.control = control
        self.unverifiedTLS = unverifiedTLS
    }

    private enum Part: CaseIterable { case by, me, room, position }

    /// The line as plain text (no control characters), at most `width` columns.
    public func render(width: Int) -> String {
        guard width > 0 else { return "" }
        let sep = " · "
        let connectionText: String? = switch connection {
        case .connecting: "connecting…"
        case .connected: nil
        case .reconnecting: "reconnecting…"
        }
        let flag = unverifiedTLS ? "TLS NOT VERIFIED" + sep : ""
        guard let room else {
            return Self.cut(flag + [connectionText ?? "connecting…", message.map(Self.clean)]
                .compactMap { $0 }.joined(separator: sep), toWidth: width)
        }
        let pageText = "page \(page)/\(pageCount)"
        let modeText: String = switch mode {
        case .following: "following"
        case .detached: "detached\(sep)room on \(roomPage)/\(pageCount)\(sep)F to follow"
        }
        let texts: [Part: String] = [
            .room: Self.clean(room),
            .by: by.map { "by " + Self.clean($0) } ?? "",
            .me: me.map { "you: " + Self.clean($0) + (control ? " ⚑" : "") } ?? "",
            .position: position.map { $0.text + ($0.moreBelow ? " more↓" : " end") } ?? "",
        ]
        let messageText = message.map(Self.clean)
        let wantedIndicator = min(2 * max(1, pageCount) - 1, 9)
        let levels: [Set<Part>] = [[], [.by], [.by, .me], [.by, .me, .room], [.by, .me, .room, .position]]

        /// The line without the parts in `dropped`; with the message whole, or cut to fit.
        func attempt(_ dropped: Set<Part>, cutMessage: Bool) -> String? {
            func shown(_ p: Part) -> String? {
                let text = texts[p] ?? ""
                return text.isEmpty || dropped.contains(p) ? nil : text
            }
            let tail = [modeText, shown(.position), connectionText, shown(.by), shown(.me)].compactMap { $0 }
            let head = flag + (shown(.room).map { $0 + sep } ?? "") + pageText
            var fixed = DisplayWidth.of(head) + DisplayWidth.of(sep + tail.joined(separator: sep))
            if !cutMessage, let messageText { fixed += DisplayWidth.of(sep + messageText) }
            let last = dropped.count == Part.allCases.count
            // A whole message is worth a one-dot indicator once the optional parts are gone.
            let squeeze = !cutMessage && messageText != nil && dropped == [.by, .me]
            let minimum = last || squeeze ? 1 : wantedIndicator
            let reserve = cutMessage && messageText != nil ? DisplayWidth.of(sep + "…") : 0
            guard fixed + 1 + minimum + reserve <= width else { return nil }
            let room = cutMessage ? min(wantedIndicator, width - fixed - 1 - reserve) : width - fixed - 1
            let indicator = PageIndicator.render(page: page, pageCount: pageCount, maxWidth: room)
            let line = head + " " + indicator + sep + (tail + [messageText].compactMap { $0 }).joined(separator: sep)
            return Self.cut(line, toWidth: width)
        }
        // Richest first: drop parts while the message fits whole, then keep the room name and cut the message.
        for dropped in levels.prefix(3) {
            if let line = attempt(dropped, cutMessage: false) { return line }
        }
        for dropped in levels.dropFirst(2) {
            if let line = attempt(dropped, cutMessage: true) { return line }
        }
        let head = flag + pageText
        return Self.cut(([head, modeText, connectionText, messageText].compactMap { $0 }).joined(separator: sep), toWidth: width)
    }

    /// Cuts `text` to `width` columns at a word boundary, ending with `…` when something was cut.
    /// A word is cut only when no boundary leaves anything before it.
    package static func cut(_ text: String, toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        var kept = Substring(Layout.truncate(text, toWidth: width).dropLast())  // without its "…"
        let cutMidWord = text.dropFirst(kept.count).first.map { $0 != " " } ?? false
        if cutMidWord, let space = kept.lastIndex(of: " ") { kept = kept[..<space] }
        while let l = kept.last, l == " " || l == "·" { kept = kept.dropLast() }
        while DisplayWidth.of(kept) + 2 > width, let space = kept.lastIndex(of: " ") {  // room for " …"
            kept = kept[..<space]
            while let l = kept.last, l == " " || l == "·" { kept = kept.dropLast() }
        }
        if kept.isEmpty || DisplayWidth.of(kept) + 2 > width { return Layout.truncate(text, toWidth: width) }
        return String(kept) + " …"
    }

    private static func clean(_ s: String) -> String {
        Sanitizer.plainText(s)
    }
}
