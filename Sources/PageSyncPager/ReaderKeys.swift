/// What a key asks the pager to do, before any state is consulted.
public enum ReaderAction: Equatable, Sendable {
    /// Space f PgDn: one screen down (or `lines` lines with a count); on the last screen, next page.
    case forward(lines: Int?)
    /// b PgUp: one screen up (or `lines` lines); at the top, previous page.
    case backward(lines: Int?)
    /// j ↓ Enter e: lines down (screen only).
    case lineDown(Int)
    /// k ↑ y: lines up (screen only).
    case lineUp(Int)
    /// d: half a screen down (or `lines` lines with a count).
    case halfDown(lines: Int?)
    /// u: half a screen up (or `lines` lines with a count).
    case halfUp(lines: Int?)
    /// g < Home: the top of the page.
    case top
    /// G > End: the bottom of the page.
    case bottom
    /// <n>g, <n>G: line n of the page at the top of the screen (as less goes to line n).
    case gotoLine(Int)
    /// <n>% <n>p: n percent into the page.
    case percent(Int)
    /// ] and :n: the room's next page (<n>]: n pages on).
    case nextPage(Int)
    /// [ and :p: the room's previous page (<n>[: n pages back).
    case previousPage(Int)
    /// {: the room's first page.
    case firstPage
    /// }: the room's last page.
    case lastPage
    /// :<n> Enter: page n.
    case gotoPage(Int)
    /// `:` starts typing a page command (`:n`, `:p`, `:<n>`).
    case startPageCommand
    /// / (forward) or ? (backward): start typing a search.
    case startSearch(forward: Bool)
    /// &: start typing a filter (only matching lines show, `!` first for the others; empty: all lines again).
    case startFilter
    /// n or N: repeat the last search (N the other way).
    case repeatSearch(reverse: Bool)
    /// ← →: sideways in chop mode (columns, negative to the left).
    case sideways(Int)
    /// w: wrap or chop long lines.
    case toggleWrap
    /// F: follow the room again.
    case follow
    /// D: detach.
    case detach
    /// p: pull the room to your page (on the room's page: to your line).
    case pull
    /// x (<n>x): mark lines of the room's page from the top of the screen (extend a mark starting there).
    case markLines(Int?)
    /// X: clear the room's mark.
    case clearMark
    /// L: pause or resume leading the room's line (a presenter with control).
    case toggleLead
    /// -: an option follows (`-N`: line numbers, as in less).
    case option
    /// A: raise or lower your hand.
    case hand
    /// a: the audience overlay (who is where, hands first).
    case audience
    /// = Ctrl-G: where you are, in full, on the status line (as less's `=`).
    case info
    /// h H: help.
    case help
    /// q Q: quit.
    case quit
    /// A key pagesync has no use for: the status line says so.
    case unknown(Key)
    /// A key that does nothing here, silently (Esc).
    case none
}

/// The key table of the reader, as in less: screen movement and lines on the keys less uses,
/// room pages on `]` `[` `{` `}` and the `:` commands (less's `:n` `:p` for its next and
/// previous file). A count typed before a key (digits) goes to the key, as in less: N lines for
/// Space, b, j, k, d, u and Enter; line N for g and G; N percent for % and p; N pages for ] and [.
public enum ReaderKeys {
    /// How far ← and → move sideways, in columns.
    public static let sidewaysStep = 8

    /// The action of `key`, with `count` when digits were typed before it.
    public static func action(for key: Key, count: Int?) -> ReaderAction {
        switch key {
        case .char(" "), .char("f"), .pageDown, .ctrl("f"), .ctrl("v"): return .forward(lines: count)
        case .char("b"), .pageUp, .ctrl("b"): return .backward(lines: count)
        case .char("j"), .down, .char("e"), .ctrl("e"), .ctrl("n"), .enter: return .lineDown(count ?? 1)
        case .char("k"), .up, .char("y"), .ctrl("y"), .ctrl("p"): return .lineUp(count ?? 1)
        case .char("d"), .ctrl("d"): return .halfDown(lines: count)
        case .char("u"), .ctrl("u"): return .halfUp(lines: count)
        case .char("g"), .char("<"), .home: return count.map { .gotoLine($0) } ?? .top
        case .char("G"), .char(">"), .end: return count.map { .gotoLine($0) } ?? .bottom
        case .char("%"): return .percent(count ?? 0)
        case .char("p"): return count.map { .percent($0) } ?? .pull
        case .char("]"): return .nextPage(count ?? 1)
        case .char("["): return .previousPage(count ?? 1)
        case .char("{"): return .firstPage
        case .char("}"): return .lastPage
        case .char(":"): return .startPageCommand
        case .char("/"): return .startSearch(forward: true)
        case .char("?"): return .startSearch(forward: false)
        case .char("&"): return .startFilter
        case .char("n"): return .repeatSearch(reverse: false)
        case .char("N"): return .repeatSearch(reverse: true)
        case .left: return .sideways(-(count ?? sidewaysStep))
        case .right: return .sideways(count ?? sidewaysStep)
        case .char("w"): return .toggleWrap
        case .char("F"): return .follow
        case .char("D"): return .detach
        case .char("x"): return .markLines(count)
        case .char("X"): return .clearMark
        case .char("L"): return .toggleLead
        case .char("-"): return .option
        case .char("A"): return .hand
        case .char("a"): return .audience
        case .char("="), .ctrl("g"): return .info
        case .char("h"), .char("H"): return .help
        case .char("q"), .char("Q"): return .quit
        case .escape: return .none
        default: return .unknown(key)
        }
    }

    /// How a key is named on the status line: `m`, `Ctrl-X`, `Tab`.
    public static func name(of key: Key) -> String {
        switch key {
        case .char(let c): String(c)
        case .ctrl(let c): "Ctrl-" + String(c).uppercased()
        case .enter: "Enter"
        case .backspace: "Backspace"
        case .tab: "Tab"
        case .escape: "Esc"
        case .up: "↑"
        case .down: "↓"
        case .left: "←"
        case .right: "→"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .home: "Home"
        case .end: "End"
        }
    }
}
