import PageSyncCore
/// The pager's brain: a pure state machine from ``PagerEvent``s to ``PagerEffect``s.
///
/// ## Truth comes from the server
/// The room state (``room``) is whatever the server said last. It is reconciled on every
/// line that carries state: `HELLO` and `OK JOIN` (a new session: taken whole, whatever the
/// version, since a restarted daemon is the authority), and `PAGE`, navigation `OK`, `ERR 409`
/// and `ERR 416` (taken only when their `version` is newer than the one held; an older one is
/// ignored, an equal one only fills in fields). The view never moves optimistically: in follow
/// mode it shows ``RoomView/page`` and changes only when such a line arrives.
///
/// ## Navigation requests
/// At most one navigation command is in flight. Presses made meanwhile accumulate into one
/// pending intent (next/previous add up to a net offset; first, last, goto and pull replace it
/// and later next/previous add to them). When the reply comes, the next command is computed
/// from the fresh state: net ±1 is `NEXT IF v` / `PREV IF v`, a larger offset or an absolute
/// target is `GOTO n IF v` (`FIRST`/`LAST` when that is what was asked). So holding a key
/// neither loses nor doubles presses.
///
/// On `ERR 409` (someone else changed the room first) a relative request whose starting page
/// is no longer the room's page is dropped: the room already moved, as it would have for that
/// press — this is how two people pressing next on the same page move the room once. If the
/// page did not change (only the version did), or the request was absolute (goto, first, last,
/// pull), it is asked again from the fresh state. A request that would not move the room (goto
/// the current page, next on the last page of a room that stops) is not sent.
///
/// ## A room that moves only on purpose
/// Space at the end of a page (b at its top) in an open room with other readers shows the end
/// first and says that the next press turns the page for everyone; only that second press does
/// (see ``EdgeGuard``). A presenter with control, and a room of one, turn at once. `b` that turns
/// back shows the end of the previous page, so reading backwards is continuous.
///
/// ## What detaches you (and nothing else does)
/// 1. `D`: detach on the current page, to browse without moving anyone.
/// 2. A page-turning key (next, previous, first, last, goto) in a room where you have no
///    control (a presenter room without `--token`): you browse locally instead of asking.
/// 3. Page-turning keys while detached keep browsing locally.
///
/// Scrolling, search, wrap, redraw, help, errors, connection loss and the room's own page
/// changes never detach you. `F` follows again (snaps back to the room's page). `p` ("pull")
/// while detached and with control sends `GOTO <your page> IF v`; when the room lands there
/// you follow again. Without control, `p` only says why it cannot.
///
/// ## Connection
/// On ``PagerEvent/disconnected(reason:)`` the screen stays, the status says "reconnecting…",
/// requests in flight and pending presses are dropped (their fate is unknown; the next greeting
/// tells the truth), and ``PagerEffect/connect(afterMilliseconds:)`` asks for a new attempt with
/// a jittered ``Backoff`` (``ServerSession``). After each greeting the model sends `NAME`, `JOIN` (back to the room it
/// was in, or `--room`) and `AUTH` as needed, and holds navigation until those are answered.
/// Errors never end the pager: their text goes to the status line.
///
/// ## Where the parts live
/// This file holds the state and the key dispatch; `PagerModel+Navigation` the page-turning
/// requests, `PagerModel+Server` the server's lines and the connection, `PagerModel+Reading`
/// page text, scrolling, wrap and search, `PagerModel+Screen` the frame and the status line.
/// The rules themselves are small pure types: ``RoomUpdates``, ``NavigationRequests``,
/// ``ReaderKeys``, ``PromptInput``, ``HelpScreen``, ``PageSearch``, ``LineFilter``, ``MarkdownRenderer``,
/// ``PageTextCache``, ``Viewport``.
public struct PagerModel: TerminalModel {
    // MARK: Public read-only state

    /// The room as last heard from the server (nil before the first greeting).
    public internal(set) var room: RoomView?
    /// Following the room or browsing on your own.
    public internal(set) var mode: FollowMode = .following
    /// The connection as shown to people.
    public var connection: ConnectionState { session.connection }
    /// The message on the status line (the last error or hint), if any.
    public internal(set) var message: String? {
        didSet { messageIsNotice = false }
    }
    /// Whether ``message`` is a notice (an error, a warning, why the connection is down) rather
    /// than a hint: the status line keeps it over the position (see ``StatusLine``).
    public internal(set) var messageIsNotice = false
    /// Whether long lines wrap (`w` toggles; off = chopped).
    public internal(set) var lineWrap = true
    /// How many columns chopped lines are scrolled sideways (← →; 0 when lines wrap).
    public internal(set) var sidewaysShift = 0
    /// How many rows the page is scrolled down.
    public var scrollOffset: Int { viewport.offset }
    /// The terminal size.
    public internal(set) var size: TerminalSize
    /// Your name as the server knows it.
    public internal(set) var clientName: String?
    /// The navigation command in flight, as sent (nil when none).
    public var navigationInFlight: Command? { turns.inFlight?.command }
    /// Whether the help screen is shown.
    public internal(set) var showingHelp = false
    /// The pager shows no clock; its ticks time the `PING` that keeps it from being closed as
    /// idle (``KeepAlive``).
    public var tickMilliseconds: UInt64? { keepAlive.tickMilliseconds }

    /// The page on screen: the room's page when following, your own when detached.
    public var displayedPage: Int? {
        switch mode {
        case .following: room?.page
        case .detached(let p): p
        }
    }

    // MARK: Internal state (used by the extensions in the other PagerModel+ files)

    typealias Intent = NavigationIntent

    let options: PagerOptions
    var turns = PageTurnQueue()
    /// The `LINE` and `MARK` asked of the room (see `PagerModel+Focus`).
    var focusRequests = FocusRequests()
    /// `L`: a presenter with control scrolls on their own for a while.
    var leadPaused = false
    /// Following the room but scrolled away from its line by yourself.
    var ownScroll = false
    /// `-N`: the document's line numbers before the lines.
    var lineNumbers = false
    /// `-` was typed: the next key is an option (`N`).
    var optionPending = false
    /// The file line each page starts on (`TEXT`'s `firstline=`).
    var fileFirstLines: [PageKey: Int] = [:]
    /// What the room was last told this screen shows (`VIEW`; a new session starts following).
    var viewReported: MemberView = .follow
    /// `D` pinned this reader away from the room's page (until `F`); paging away does not.
    var pinned = false
    /// Whether this member's hand is up (`A`).
    public internal(set) var handUp = false
    /// Where the room is, for a presenter (`AUDIENCE`), if the server said.
    public internal(set) var audience: AudienceSummary?
    /// The audience overlay (`a`), while it shows.
    package internal(set) var overlay: AudienceOverlay?
    var outstanding: [ReplyExpectation] = []
    /// When to send a `PING` so that a daemon with `idle-timeout` keeps the connection.
    var keepAlive = KeepAlive(tickMilliseconds: 500)
    var assembler = ReplyAssembler()
    var texts = PageTextCache()
    var viewport = Viewport()
    var prompt: PagerPrompt?
    var lastSearch: (pattern: SearchPattern, forward: Bool)?
    var searchLine: Int?
    /// `&`: which lines are shown.
    var filter: LineFilter?
    /// A search going on through the document's other pages (the view stays).
    var documentSearch: DocumentSearch?
    /// Where that search found its match, for the next `n` to show.
    var foundMatch: FoundMatch?
    /// A match to show once page `key` has its lines (a search went there).
    var pendingMatch: (key: PageKey, line: Int)?
    /// Where to put the screen once the page `key` has its text: the line you were reading when
    /// the page's document changed on disk or the connection came back, or the page's end (`b`
    /// turned back to it).
    var kept: (key: PageKey, place: KeptPlace)?
    /// Where you were reading when the connection dropped, put back when the greeting (or the
    /// `JOIN` back to your room) shows the same page of the same document.
    var resume: ResumePlace?
    /// The page `b` turned back to: it opens at its end.
    var landingAtEnd: Int?
    /// Space at the end, b at the top: the second press turns an open room's page.
    var edge = EdgeGuard()
    /// The last page rendered as markdown (rendering is kept while the page stays).
    var markdownCache: (key: PageKey, page: RenderedMarkdown)?
    var help = HelpScreen()
    /// The greeting check, the handshake, the server's parting words and reconnecting.
    var session: ServerSession
    var rowsCache = PageRowsCache()
    /// The page on screen when it is too long to hold whole: read in pieces (see ``PageWindow``).
    package var longPage: LongPage?

    /// Whether this pager may ask the room to turn: the room gives control and `--follow` was not given.
    var mayTurn: Bool { (room?.control ?? false) && !options.followOnly }

    /// Whether Space at the end of a page (b at its top) asks before turning (``EdgeGuard``):
    /// following an open room (where everyone may turn) with control to turn it.
    var edgeGuarded: Bool { mode == .following && mayTurn && (room?.open ?? false) }

    /// A model in state "connecting"; the shell starts connecting right away.
    public init(options: PagerOptions) {
        self.options = options
        self.size = options.size
        self.session = ServerSession(seed: options.randomSeed)
        self.lineNumbers = options.lineNumbers
    }

    // MARK: Events

    /// Applies one event; returns what the shell must do, in order (at most one repaint, last).
    public mutating func handle(_ event: PagerEvent) -> [PagerEffect] {
        if case .tick(let reading) = event { return keepingAlive(at: reading.monotonicMilliseconds) }
        let fx = apply(event)
        keepAlive.sent(in: fx)
        return fx
    }

    /// A tick: a `PING` when the pager has sent nothing for half the server's idle timeout.
    private mutating func keepingAlive(at milliseconds: UInt64) -> [PagerEffect] {
        guard keepAlive.tick(milliseconds), connection == .connected, session.greeted else { return [] }
        outstanding.append(.keepAlive)
        return [.send(.ping(nil))]
    }

    private mutating func apply(_ event: PagerEvent) -> [PagerEffect] {
        var fx: [PagerEffect] = []
        var repaint = false
        var clear = false
        switch event {
        case .key(let key):
            handleKey(key, &fx, &repaint, &clear)
        case .serverLine(let line):
            if let msg = assembler.feed(line) {
                handleServer(msg, &fx)
                repaint = true
            }
        case .connected:
            assembler.reset()
            outstanding = []
            session.connected()
        case .disconnected(let reason):
            handleDisconnect(reason, &fx)
            repaint = true
        case .resized(let newSize):
            let top = topLine()
            size = newSize
            restoreTop(line: top)
            if showingHelp { clampHelp() }  // the help's own scroll, as the page's
            clear = true
        case .resumed:
            clear = true
        case .tick:
            return []  // handled by handle(_:)
        }
        if fx.contains(where: { if case .quit = $0 { true } else { false } }) { return fx }
        ensureText(&fx)
        reportView(&fx)
        if clear { fx.append(.clearAndRepaint) } else if repaint { fx.append(.repaint) }
        return fx
    }

    // MARK: Keys

    private mutating func handleKey(_ key: Key, _ fx: inout [PagerEffect], _ repaint: inout Bool, _ clear: inout Bool) {
        repaint = true
        switch key {
        case .ctrl("c"): fx.append(.quit(status: 0, message: nil)); return
        case .ctrl("z"): fx.append(.suspend); repaint = false; return
        case .ctrl("l"): clear = true; return
        default: break
        }
        if let p = prompt {
            handlePromptKey(p, key, &fx)
            return
        }
        if overlay != nil {
            overlayKey(key, &fx)
            return
        }
        if showingHelp {
            var close = false
            repaint = help.handle(key, halfPage: halfPage, close: &close)
            if close { showingHelp = false }
            clampHelp()
            return
        }
        message = nil
        if optionPending {
            optionPending = false
            if key == .char("N") { toggleLineNumbers() } else { message = "-\(ReaderKeys.name(of: key)): not an option (-N: line numbers)" }
            return
        }
        if case .char(let c) = key, c.isASCII, c.isNumber {
            prompt = .count(String(c))
            return
        }
        perform(ReaderKeys.action(for: key, count: nil), &fx, &repaint)
    }

    /// Carries out one reader action (see ``ReaderKeys``).
    private mutating func perform(_ action: ReaderAction, _ fx: inout [PagerEffect], _ repaint: inout Bool) {
        if !action.pressesAtAnEdge { edge.reset() }
        let before = action.movesWithinPage ? (key: displayKey, top: topLine()) : nil
        defer {
            if let before, displayKey == before.key, topLine() != before.top { movedWithinPage(&fx) }
        }
        switch action {
        case .forward(let lines):
            if !atBottom { edge.reset(); scroll(by: lines ?? contentHeight) }
            else if pageGoesOn(down: true) { message = longPage?.failure ?? "reading on…" }
            else { pressAtEdge(.forward, &fx) }
        case .backward(let lines):
            if !viewport.atTop { edge.reset(); scroll(by: -(lines ?? contentHeight)) }
            else if pageGoesOn(down: false) { message = longPage?.failure ?? "reading back…" }
            else { pressAtEdge(.backward, &fx) }
        case .lineDown(let n): scroll(by: n)
        case .lineUp(let n): scroll(by: -n)
        case .halfDown(let lines): scroll(by: lines ?? halfPage)
        case .halfUp(let lines): scroll(by: -(lines ?? halfPage))
        case .top: head(to: .start); scroll(by: Int.min / 2)
        case .bottom: head(to: .end); scroll(by: Int.max / 2)
        case .gotoLine(let n): goToLine(max(1, n) - 1)
        case .percent(let n): goToPercent(n)
        case .nextPage(let n): navigate(Intent(base: .current, offset: max(1, n)), &fx)
        case .previousPage(let n): navigate(Intent(base: .current, offset: -max(1, n)), &fx)
        case .firstPage: navigate(Intent(base: .first, offset: 0), &fx)
        case .lastPage: navigate(Intent(base: .last, offset: 0), &fx)
        case .gotoPage(let n):
            guard n >= 1 else { message = "page numbers start at 1"; return }
            navigate(Intent(base: .page(n), offset: 0), &fx)
        case .startPageCommand: prompt = .page("")
        case .startSearch(let forward): prompt = .search(forward: forward, "")
        case .startFilter: prompt = .filter("")
        case .repeatSearch(let reverse): repeatSearch(reverse: reverse, &fx)
        case .sideways(let columns): scrollSideways(by: columns)
        case .toggleWrap: toggleWrap()
        case .follow: follow(&fx)
        case .detach: detach()
        case .pull: pull(&fx)
        case .markLines(let count): markLines(count: count, &fx)
        case .clearMark: clearMark(&fx)
        case .toggleLead: toggleLead(&fx)
        case .option: optionPending = true; message = "-: N shows or hides line numbers"
        case .hand: toggleHand(&fx)
        case .audience: openOverlay(&fx)
        case .info: notice(info())  // asked for: in full
        case .help: showingHelp = true; help = HelpScreen()
        case .quit: fx.append(.quit(status: 0, message: nil))
        case .unknown(let key): message = "\(ReaderKeys.name(of: key)): not a pagesync key (h lists them)"
        case .none:
            if documentSearch != nil { stopDocumentSearch() }  // Esc stops a search going through pages
            repaint = message != nil
        }
    }

    private mutating func handlePromptKey(_ p: PagerPrompt, _ key: Key, _ fx: inout [PagerEffect]) {
        switch PromptInput.edit(p, key) {
        case .editing(let next):
            prompt = next
        case .countThen(let count, let key):
            prompt = nil
            message = nil
            var ignoredRepaint = false
            perform(ReaderKeys.action(for: key, count: count), &fx, &ignoredRepaint)
        case .command(let action):
            prompt = nil
            message = nil
            var ignoredRepaint = false
            perform(action, &fx, &ignoredRepaint)
        case .unknownCommand(let text):
            prompt = nil
            message = "\(text): not a pagesync command (:n :p :<page> Enter)"
        case .search(let text, let forward):
            prompt = nil
            if text.isEmpty {
                guard let last = lastSearch else { return }
                lastSearch = (last.pattern, forward)
            } else {
                do throws(SearchPatternError) {
                    lastSearch = (try SearchPattern(text), forward)
                } catch {
                    message = error.message
                    return
                }
                searchLine = nil
                rowsCache.forget()
            }
            documentSearch = nil
            foundMatch = nil
            runSearch(forward: forward, show: false, &fx)
        case .filter(let text):
            prompt = nil
            applyFilter(text)
        }
    }

    /// Sets the status line's message as a notice: an error, a warning, why the connection is
    /// down (the status line keeps it over the position).
    mutating func notice(_ text: String?) {
        message = text
        messageIsNotice = text != nil
    }
}

extension ReaderAction {
    /// Whether the action may be a press at an edge of the page (Space, b): the others let go of
    /// the ``EdgeGuard``.
    var pressesAtAnEdge: Bool {
        switch self {
        case .forward, .backward: true
        default: false
        }
    }

    /// Whether the action scrolls the page on screen (a leader's scroll moves the room's line).
    var movesWithinPage: Bool {
        switch self {
        case .forward, .backward, .lineDown, .lineUp, .halfDown, .halfUp, .top, .bottom, .gotoLine, .percent: true
        default: false
        }
    }
}
