/// What a key asks the pager to do, before any state is consulted.
public enum ReaderAction: Equatable, Sendable {
    /// Space f PgDn: one screen down (or `lines` lines with a count); on the last screen, next page.
    case forward(lines: Int?)
    /// b PgUp: one screen up (or `lines` lines); at the top, previous page.
    case backward(lines: Int?)
    /// j ↓ e: lines down (screen only).
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
    /// ]: the room's next page.
    case nextPage
    /// [: the room's previous page.
    case previousPage
    /// {: the room's first page.
    case firstPage
    /// }: the room's last page.
    case lastPage
    /// <n>g, <n>G, <n>Enter: page n.
    case gotoPage(Int)
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
    /// p: pull the room to your page.
    case pull
    /// h H: help.
    case help
    /// q Q: quit.
    case quit
    /// A key that does nothing here.
    case none
}

/// The key table of the reader, as in less: screen movement on the keys less uses, room
/// navigation on `[` `]` `{` `}` and `<n>g`. A count typed before a key (digits) goes to the
/// key: N lines for Space, b, j, k, d, u; page N for g, G and Enter.
public enum ReaderKeys {
    /// How far ← and → move sideways, in columns.
    public static let sidewaysStep = 8

    /// The action of `key`, with `count` when digits were typed before it.
    public static func action(for key: Key, count: Int?) -> ReaderAction {
        switch key {
        case .char(" "), .char("f"), .pageDown, .ctrl("f"), .ctrl("v"): return .forward(lines: count)
        case .char("b"), .pageUp, .ctrl("b"): return .backward(lines: count)
        case .char("j"), .down, .char("e"), .ctrl("e"), .ctrl("n"): return .lineDown(count ?? 1)
        case .char("k"), .up, .char("y"), .ctrl("y"), .ctrl("p"): return .lineUp(count ?? 1)
        case .enter: return count.map { .gotoPage($0) } ?? .lineDown(1)
        case .char("d"), .ctrl("d"): return .halfDown(lines: count)
        case .char("u"), .ctrl("u"): return .halfUp(lines: count)
        case .char("g"), .char("G"):
            if let count { return .gotoPage(count) }
            return key == .char("g") ? .top : .bottom
        case .char("<"), .home: return .top
        case .char(">"), .end: return .bottom
        case .char("]"): return .nextPage
        case .char("["): return .previousPage
        case .char("{"): return .firstPage
        case .char("}"): return .lastPage
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
        case .char("p"): return .pull
        case .char("h"), .char("H"): return .help
        case .char("q"), .char("Q"): return .quit
        default: return .none
        }
    }
}
