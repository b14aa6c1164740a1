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
/// `guide · page 3/12 ○ ○ ● … ○ · following · lines 1-23/41 56% more↓ · by bob · you: ann ⚑`,
/// or when detached `guide · page 5/12 ○ … ● … ○ · detached · room on 7/12 · F to follow`, a
/// message last. The room is named by its document's title when it has one. `⚑` marks that you
/// have control (your page turns move the room). With `--tls-insecure` the line starts with
/// `TLS NOT VERIFIED`, which is never dropped (only cut by a very narrow screen).
///
/// The dots have a fixed width for a document (``PageIndicator``), and the page number is as wide
/// as the page count (`page  7/23`), so the line never jumps as pages turn. When the width is
/// short, parts give way by priority, the least first: who turned the page, your name, the dots
/// (`page n/N` says the same), a hint (beside the short position, then cut at a word, then
/// dropped), the position (`56%`, then nothing), the follow state (`room 7/12` when detached),
/// a notice (an error, the server's reason while reconnecting, the warning before a page turn
/// for everyone: cut only when nothing else is left to give), the room's name (cut). `page n/N`
/// stays. Cuts never fall inside a word when a word boundary leaves something before them.
/// Text that came from the server (room name, title, names, messages) is sanitized to plain text first.
public struct StatusLine: Equatable, Sendable {
    /// The room's name (or its title), or nil before the greeting.
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
    /// Whether ``message`` is a notice (an error, a warning, why the connection is down), which
    /// gives way after the position, or a hint, which gives way before it.
    public var urgent: Bool
    /// Where the screen is within a page that does not fit it (nil: the page fits, or is not loaded).
    public var position: PagePosition?
    /// Your own name as the server knows it (nil: not known yet).
    public var me: String?
    /// Whether your page turns move the room (marked `⚑` after your name).
    public var control: Bool
    /// The connection is TLS without certificate checks (`--tls-insecure`): said first, always.
    public var unverifiedTLS: Bool
    /// Following, but reading elsewhere on the room's page: the room's line (`room at line 212`).
    public var roomLine: Int?
    /// Scrolling moves the room's line (a presenter with control): `leading` for `following`.
    public var leading = false
    /// For a presenter: where the room is (`12 following · 3 browsing · 1 hand (ann)`).
    public var audience: String?
    /// Your hand is up: `✋` after your name.
    public var handUp = false

    /// A status line with every part given.
    public init(room: String?, page: Int, pageCount: Int, mode: FollowMode, roomPage: Int,
                connection: ConnectionState, by: String?, message: String?, urgent: Bool = false,
                position: PagePosition? = nil, me: String? = nil, control: Bool = false, unverifiedTLS: Bool = false) {
        self.room = room
        self.page = page
        self.pageCount = pageCount
        self.mode = mode
        self.roomPage = roomPage
        self.connection = connection
        self.by = by
        self.message = message
        self.urgent = urgent
        self.position = position
        self.me = me
        self.control = control
        self.unverifiedTLS = unverifiedTLS
    }

    /// The parts of the line, in the order they give way.
    private enum Part: CaseIterable { case by, me, dots, hint, audience, position, state, notice, name }

    /// The widest the dots get, in columns: seven tokens (`○ … ○ ● ○ … ○`, see ``PageIndicator``).
    public static let indicatorWidth = 13

    /// The line as plain text (no control characters), at most `width` columns.
    public func render(width: Int) -> String {
        guard width > 0 else { return "" }
        let sep = " · "
        let flag = unverifiedTLS ? "TLS NOT VERIFIED" : nil
        let messageText = message.map(Self.clean)
        guard let room else {
            let text = [flag, connection == .connected ? nil : "connecting…", messageText].compactMap { $0 }.joined(separator: sep)
            return Self.cut(text, toWidth: width)
        }
        let reconnecting = if case .reconnecting = connection { true } else { false }
        // Each part's forms, fullest first; a part past its last form is left out.
        var forms: [Part: [String]] = [:]
        forms[.name] = [Self.clean(room)]
        forms[.dots] = [PageIndicator.render(page: page, pageCount: pageCount,
                                             maxWidth: min(2 * max(1, pageCount) - 1, Self.indicatorWidth))]
        switch (mode, reconnecting) {
        case (.following, false):
            if let roomLine {
                forms[.state] = ["room at line \(roomLine)\(sep)F to follow", "room at line \(roomLine)", "line \(roomLine)"]
            } else {
                forms[.state] = [leading ? "leading" : "following"]
            }
        case (.following, true): forms[.state] = ["reconnecting…"]
        case (.detached, let r):
            let room = "room on \(roomPage)/\(pageCount)"
            forms[.state] = ["detached\(sep)\(room)\(sep)F to follow" + (r ? "\(sep)reconnecting…" : ""),
                             "detached\(sep)" + (r ? "reconnecting…" : room), r ? "reconnecting…" : "room \(roomPage)/\(pageCount)"]
        }
        if let position {
            let end = position.moreBelow ? " more↓" : " end"
            forms[.position] = [position.text + end, position.shortText + end]
        }
        if let by { forms[.by] = ["by " + Self.clean(by)] }
        if let me { forms[.me] = ["you: " + Self.clean(me) + (control ? " ⚑" : "") + (handUp ? " ✋" : "")] }
        if let audience { forms[.audience] = [audience] }
        if let messageText { forms[urgent ? .notice : .hint] = [messageText] }

        // The page number as wide as the page count, so nothing after it moves as pages turn.
        let number = String(repeating: " ", count: max(0, String(pageCount).count - String(page).count)) + String(page)
        var level: [Part: Int] = [:]
        func text(_ part: Part) -> String? {
            guard let f = forms[part], level[part, default: 0] < f.count else { return nil }
            return f[level[part, default: 0]]
        }
        func line() -> String {
            let pageText = "page \(number)/\(pageCount)" + (text(.dots).map { " " + $0 } ?? "")
            return ([flag, text(.name), pageText, text(.state), text(.audience), text(.position), text(.by), text(.me), text(.notice), text(.hint)]
                .compactMap { $0 }).joined(separator: sep)
        }
        var current = line()
        if DisplayWidth.of(current) <= width { return current }
        for part in Part.allCases {
            // A hint that does not fit whole first gets the short position (`56% more↓`) beside it.
            if part == .hint, text(.hint) != nil, level[.position, default: 0] == 0, forms[.position] != nil {
                level[.position] = 1
                current = line()
                if DisplayWidth.of(current) <= width { return current }
            }
            while let shown = text(part) {
                // A message or the room's name is cut to what is left before it goes.
                if [.hint, .notice, .name].contains(part) {
                    let left = width - (DisplayWidth.of(current) - DisplayWidth.of(shown))
                    let least = part == .hint ? 12 : part == .notice ? 8 : 4
                    if left >= least {
                        forms[part] = [Self.cut(shown, toWidth: left)]
                        return line()
                    }
                }
                level[part, default: 0] += 1
                current = line()
                if DisplayWidth.of(current) <= width { return current }
            }
        }
        return Self.cut(current, toWidth: width)
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
