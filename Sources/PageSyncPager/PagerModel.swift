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
/// ``ReconnectBackoff``. After each greeting the model sends `NAME`, `JOIN` (back to the room it
/// was in, or `--room`) and `AUTH` as needed, and holds navigation until those are answered.
/// Errors never end the pager: their text goes to the status line.
public struct PagerModel: Sendable {
    // MARK: Public read-only state

    /// The room as last heard from the server (nil before the first greeting).
    public private(set) var room: RoomView?
    /// Following the room or browsing on your own.
    public private(set) var mode: FollowMode = .following
    /// The connection as shown to people.
    public private(set) var connection: ConnectionState = .connecting
    /// The message on the status line (the last error or hint), if any.
    public private(set) var message: String?
    /// Whether long lines wrap (`w` toggles; off = chopped).
    public private(set) var lineWrap = true
    /// How many rows the page is scrolled down.
    public var scrollOffset: Int { viewport.offset }
    /// The terminal size.
    public private(set) var size: TerminalSize
    /// Your name as the server knows it.
    public private(set) var clientName: String?
    /// The navigation command in flight, as sent (nil when none).
    public var navigationInFlight: String? { inFlight?.command }
    /// Whether the help screen is shown.
    public private(set) var showingHelp = false

    /// The page on screen: the room's page when following, your own when detached.
    public var displayedPage: Int? {
        switch mode {
        case .following: room?.page
        case .detached(let p): p
        }
    }

    // MARK: Private state

    private typealias Intent = NavigationIntent
    private typealias TextKey = PageKey
    private enum Expectation: Sendable { case navigation, text(TextKey), name, join, auth }
    private enum Prompt: Equatable, Sendable { case count(String), search(forward: Bool, String), filter(String) }
    private struct LayoutCache: Sendable { var key: TextKey?; var help: Bool; var width: Int; var wrap: Bool; var rows: [LayoutRow] }

    private let options: PagerOptions
    private var rng: UInt64
    private var inFlight: NavigationRequest?
    private var queued: Intent?
    private var outstanding: [Expectation] = []
    private var assembler = ReplyAssembler()
    private var texts = PageTextCache()
    private var viewport = Viewport()
    private var prompt: Prompt?
    private var lastSearch: (pattern: SearchPattern, forward: Bool)?
    private var searchLine: Int?
    /// `&`: which lines are shown.
    private var filter: LineFilter?
    /// A search going on to the next or previous page, waiting for that page's text.
    private var pendingSearch: PendingSearch?
    private var helpOffset = 0
    private var greeted = false
    /// The reason of the server's last `BYE`, kept on the status line until the next greeting.
    private var farewell: String?
    private var attempts = 0
    private var rejoinRoom: String?
    private var layoutCache: LayoutCache?
    /// The last page rendered as markdown (rendering is kept while the page stays).
    private var markdownCache: (key: TextKey, lines: [String])?

    /// Whether this pager may ask the room to turn: the room gives control and `--follow` was not given.
    private var mayTurn: Bool { (room?.control ?? false) && !options.followOnly }

    /// A model in state "connecting"; the shell starts connecting right away.
    public init(options: PagerOptions) {
        self.options = options
        self.size = options.size
        self.rng = options.randomSeed
    }

    // MARK: Events

    /// Applies one event; returns what the shell must do, in order (at most one repaint, last).
    public mutating func handle(_ event: PagerEvent) -> [PagerEffect] {
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
        case .disconnected(let reason):
            handleDisconnect(reason, &fx)
            repaint = true
        case .resized(let newSize):
            let top = topLine()
            size = newSize
            restoreTop(line: top)
            clear = true
        case .resumed:
            clear = true
        }
        if fx.contains(where: { if case .quit = $0 { true } else { false } }) { return fx }
        ensureText(&fx)
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
        pendingSearch = nil
        if let p = prompt {
            handlePromptKey(p, key, &fx)
            return
        }
        if showingHelp {
            switch key {
            case .char("q"), .char("h"), .char("H"), .escape, .enter: showingHelp = false
            case .char("j"), .down: helpOffset += 1
            case .char("k"), .up: helpOffset = max(0, helpOffset - 1)
            case .char("d"), .char(" "), .pageDown, .char("f"): helpOffset += halfPage
            case .char("u"), .pageUp, .char("b"): helpOffset = max(0, helpOffset - halfPage)
            default: repaint = false
            }
            clampHelp()
            return
        }
        message = nil
        if case .char(let c) = key, c.isASCII, c.isNumber {
            prompt = .count(String(c))
            return
        }
        perform(ReaderKeys.action(for: key, count: nil), &fx, &repaint)
    }

    /// Carries out one reader action (see ``ReaderKeys``).
    private mutating func perform(_ action: ReaderAction, _ fx: inout [PagerEffect], _ repaint: inout Bool) {
        switch action {
        case .forward(let lines):
            if atBottom { navigate(Intent(base: .current, offset: 1), &fx) }
            else { scroll(by: lines ?? contentHeight) }
        case .backward(let lines):
            if viewport.atTop { navigate(Intent(base: .current, offset: -1), &fx) }
            else { scroll(by: -(lines ?? contentHeight)) }
        case .lineDown(let n): scroll(by: n)
        case .lineUp(let n): scroll(by: -n)
        case .halfDown(let lines): scroll(by: lines ?? halfPage)
        case .halfUp(let lines): scroll(by: -(lines ?? halfPage))
        case .top: scroll(by: Int.min / 2)
        case .bottom: scroll(by: Int.max / 2)
        case .nextPage: navigate(Intent(base: .current, offset: 1), &fx)
        case .previousPage: navigate(Intent(base: .current, offset: -1), &fx)
        case .firstPage: navigate(Intent(base: .first, offset: 0), &fx)
        case .lastPage: navigate(Intent(base: .last, offset: 0), &fx)
        case .gotoPage(let n):
            guard n >= 1 else { message = "page numbers start at 1"; return }
            navigate(Intent(base: .page(n), offset: 0), &fx)
        case .startSearch(let forward): prompt = .search(forward: forward, "")
        case .startFilter: prompt = .filter("")
        case .repeatSearch(let reverse): repeatSearch(reverse: reverse, &fx)
        case .sideways: message = "long lines wrap here: w chops them"
        case .toggleWrap: toggleWrap()
        case .follow: follow(&fx)
        case .detach: detach()
        case .pull: pull(&fx)
        case .help: showingHelp = true; helpOffset = 0
        case .quit: fx.append(.quit(status: 0, message: nil))
        case .none: repaint = message != nil
        }
    }

    private mutating func handlePromptKey(_ p: Prompt, _ key: Key, _ fx: inout [PagerEffect]) {
        switch (p, key) {
        case (_, .escape):
            prompt = nil
        case (.count(let digits), .char(let c)) where c.isASCII && c.isNumber:
            prompt = .count(digits.count < 12 ? digits + String(c) : digits)
        case (.count(let digits), .backspace):
            prompt = digits.count > 1 ? .count(String(digits.dropLast())) : nil
        case (.count(let digits), _):
            prompt = nil
            message = nil
            var ignoredRepaint = false
            perform(ReaderKeys.action(for: key, count: Int(digits) ?? 0), &fx, &ignoredRepaint)
        case (.search(let forward, let text), .enter):
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
                layoutCache = nil
            }
            runSearch(forward: forward, crossPages: false, &fx)
        case (.filter(let text), .enter):
            prompt = nil
            applyFilter(text)
        case (.filter(let text), .backspace):
            prompt = text.isEmpty ? nil : .filter(String(text.dropLast()))
        case (.filter(let text), .char(let c)):
            prompt = .filter(text + String(c))
        case (.filter(let text), .tab):
            prompt = .filter(text + " ")
        case (.filter, _):
            break
        case (.search(let forward, let text), .backspace):
            prompt = text.isEmpty ? nil : .search(forward: forward, String(text.dropLast()))
        case (.search(let forward, let text), .char(let c)):
            prompt = .search(forward: forward, text + String(c))
        case (.search(let forward, let text), .tab):
            prompt = .search(forward: forward, text + " ")
        case (.search, _):
            break
        }
    }

    // MARK: Navigation

    private mutating func navigate(_ press: Intent, _ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        if case .detached(let view) = mode {
            browseLocally(from: view, press, room)
            return
        }
        if !mayTurn {
            mode = .detached(viewPage: room.page)
            browseLocally(from: room.page, press, room)
            if message == nil {
                message = options.followOnly ? "follower only (--follow): browsing on your own"
                    : "no control here: browsing on your own"
            }
            return
        }
        guard connection == .connected else { message = "not connected: page turns need the server"; return }
        queued = NavigationRequests.combine(queued, press)
        flush(&fx)
    }

    private mutating func browseLocally(from view: Int, _ press: Intent, _ room: RoomView) {
        guard let target = NavigationRequests.resolve(press, current: view, room: room) else {
            message = NavigationRequests.edgeMessage(press, current: view, room: room)
            return
        }
        guard target <= room.pageCount else {
            message = "no page \(target): this document has \(room.pageCount) pages"
            return
        }
        setView(.detached(viewPage: target))
    }

    private var handshakePending: Bool {
        outstanding.contains { if case .join = $0 { true } else if case .auth = $0 { true } else { false } }
    }

    /// Sends the pending intent if nothing is in flight and the state allows it.
    private mutating func flush(_ fx: inout [PagerEffect]) {
        guard inFlight == nil, let intent = queued, let room, connection == .connected, !handshakePending else { return }
        guard mayTurn else { queued = nil; return }
        queued = nil
        guard let target = NavigationRequests.resolve(intent, current: room.page, room: room) else {
            if intent.pull, case .detached(let v) = mode, v == room.page { setView(.following) }
            if let m = NavigationRequests.edgeMessage(intent, current: room.page, room: room) { message = m }
            return
        }
        let command = NavigationRequests.command(for: intent, target: target, version: room.version)
        inFlight = NavigationRequest(intent: intent, command: command, basePage: room.page, target: target)
        outstanding.append(.navigation)
        fx.append(.send(command))
    }

    private mutating func follow(_ fx: inout [PagerEffect]) {
        guard case .detached = mode else { message = "already following the room"; return }
        setView(.following)
    }

    private mutating func detach() {
        guard let room else { message = "not connected yet"; return }
        guard mode == .following else { return }
        mode = .detached(viewPage: room.page)
        message = mayTurn ? "p: pull the room here" : nil
    }

    private mutating func pull(_ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        guard case .detached(let view) = mode else { message = "you are on the room's page"; return }
        guard !options.followOnly else { message = "follower only (--follow): this pager never moves the room"; return }
        guard room.control else { message = "pulling the room needs control (start pagesync with --token)"; return }
        guard connection == .connected else { message = "not connected: pulling needs the server"; return }
        queued = Intent(base: .page(view), offset: 0, pull: true)
        flush(&fx)
    }

    // MARK: Server messages

    private mutating func handleServer(_ msg: ServerMessage, _ fx: inout [PagerEffect]) {
        switch msg {
        case .multiline(let header, let lines, let truncated):
            guard !outstanding.isEmpty else { return }
            let expectation = outstanding.removeFirst()
            if case .text(let key) = expectation, header.words.first == "TEXT" {
                var content = lines
                if truncated || header.yesNo("truncated") == true {
                    content.append("[this page is longer than the server sends: it was cut here]")
                }
                storeText(content, for: TextKey(doc: header.fields["doc"] ?? key.doc,
                                                page: header.int("page") ?? key.page))
            }
            flush(&fx)
        case .line(let line):
            switch line.kind {
            case "HELLO": handleHello(line, &fx)
            case "PAGE":
                reconcile(line)
            case "OK", "ERR":
                guard !outstanding.isEmpty else {
                    if line.kind == "ERR" { message = line.text }
                    return
                }
                handleReply(line, to: outstanding.removeFirst(), &fx)
                flush(&fx)
            case "BYE":
                farewell = "server: " + line.text
                message = farewell
            default:
                break
            }
        }
    }

    private mutating func handleHello(_ line: WireLine, _ fx: inout [PagerEffect]) {
        guard let view = Self.fullView(line, control: line.yesNo("control") ?? true) else {
            message = "unexpected greeting from the server"
            return
        }
        connection = .connected
        attempts = 0
        greeted = true
        farewell = nil
        outstanding = []
        inFlight = nil
        queued = nil
        message = nil
        takeWhole(view)
        clientName = line.fields["name"]
        if rejoinRoom == nil { rejoinRoom = options.room ?? view.name }
        if let name = options.name, name != clientName {
            fx.append(.send("NAME \(name)"))
            outstanding.append(.name)
        }
        if let target = rejoinRoom, target != view.name {
            fx.append(.send("JOIN \(target)"))
            outstanding.append(.join)
        }
        if let token = options.token {
            fx.append(.send("AUTH \(token)"))
            outstanding.append(.auth)
        }
    }

    private mutating func handleReply(_ line: WireLine, to expectation: Expectation, _ fx: inout [PagerEffect]) {
        switch expectation {
        case .navigation:
            let request = inFlight
            inFlight = nil
            if line.kind == "OK" {
                reconcile(line)
                if let request, request.intent.pull, let room, room.page == request.target,
                   mode == .detached(viewPage: request.target) {
                    setView(.following)
                }
            } else {
                let code = line.errorCode
                switch code {
                case 409:
                    reconcile(line)
                    if let request {
                        let absolute = request.intent.base != .current || request.intent.pull
                        if absolute || room?.page == request.basePage {
                            queued = NavigationRequests.combine(request.intent, queued ?? Intent(base: .current, offset: 0))
                        }
                    }
                case 416:
                    reconcile(line)
                    message = line.text
                case 403:
                    room?.control = false
                    queued = nil
                    message = line.text
                default:
                    queued = nil
                    message = line.text
                }
            }
        case .text(let key):
            if line.kind == "ERR" {
                storeText(["[page \(key.page) could not be loaded: \(line.text)]"], for: key)
                message = line.text
            }
        case .name:
            if line.kind == "OK" { clientName = line.words.dropFirst().first.map(String.init) ?? clientName }
            else { message = line.text }
        case .join:
            if line.kind == "OK", let view = Self.fullView(line, control: line.yesNo("control") ?? true) {
                takeWhole(view)
            } else {
                message = line.text
            }
        case .auth:
            if line.kind == "OK" {
                room?.control = line.yesNo("control") ?? true
            } else {
                message = line.text
            }
        }
    }

    private mutating func handleDisconnect(_ reason: String, _ fx: inout [PagerEffect]) {
        inFlight = nil
        queued = nil
        outstanding = []
        texts.forgetRequests()
        assembler.reset()
        if !greeted && options.quitIfFirstConnectionFails {
            let why = farewell ?? message ?? reason  // e.g. "server full" sent before the close
            fx.append(.quit(status: 1, message: "pagesync: cannot connect to \(options.server): \(why)"))
            return
        }
        attempts += 1
        connection = greeted ? .reconnecting(attempt: attempts) : .connecting
        // The server's own goodbye says more than what the socket saw afterwards.
        message = farewell ?? (reason.isEmpty ? nil : reason)
        fx.append(.connect(afterMilliseconds: ReconnectBackoff.delay(attempt: attempts, unitRandom: nextRandom())))
    }

    /// A complete view from a `HELLO` or `OK JOIN` line, or nil if fields are missing.
    private static func fullView(_ line: WireLine, control: Bool) -> RoomView? {
        guard let name = line.fields["room"], let page = line.int("page"), let pages = line.int("pages"),
              let version = line.version, pages >= 1 else { return nil }
        let by = line.fields["by"].flatMap { $0 == "-" ? nil : $0 }
        return RoomView(name: String(name), page: min(max(1, page), pages), pageCount: pages, version: version,
                        epoch: line.fields["epoch"] ?? "", by: by, doc: line.fields["doc"] ?? "", wraps: line.yesNo("wrap") ?? false,
                        control: control, file: line.fields["file"])
    }

    /// A new session's state: taken whatever its version.
    private mutating func takeWhole(_ view: RoomView) {
        let old = displayKey
        room = view
        clampView()
        afterStateChange(from: old)
    }

    /// Applies a versioned line (`PAGE`, navigation `OK`, `ERR 409/416`): newer replaces, equal fills in, older is
    /// ignored. A line from another epoch is a reset: its state is taken whatever its version.
    private mutating func reconcile(_ line: WireLine) {
        guard var r = room else { return }
        if let name = line.fields["room"], name != r.name { return }  // another room's news
        if let control = line.yesNo("control") { r.control = control }
        if let wraps = line.yesNo("wrap") { r.wraps = wraps }
        let newEpoch = line.fields["epoch"].map { $0 != r.epoch } ?? false
        if let v = line.version, v >= r.version || newEpoch {
            if v > r.version || newEpoch, let page = line.int("page"), let pages = line.int("pages"), pages >= 1 {
                r.version = v
                if let epoch = line.fields["epoch"] { r.epoch = epoch }
                r.pageCount = pages
                r.page = min(max(1, page), pages)
                if let by = line.fields["by"] { r.by = by == "-" ? nil : by }
                if let doc = line.fields["doc"] { r.doc = doc }
            } else if v == r.version {
                if let by = line.fields["by"] { r.by = by == "-" ? nil : by }
                if let doc = line.fields["doc"] { r.doc = doc }
            }
        }
        let old = displayKey
        room = r
        clampView()
        afterStateChange(from: old)
    }

    private mutating func clampView() {
        guard let room, case .detached(let v) = mode else { return }
        mode = .detached(viewPage: min(max(1, v), room.pageCount))
    }

    // MARK: Text

    private var displayKey: TextKey? {
        guard let room, let page = displayedPage else { return nil }
        return TextKey(doc: room.doc, page: page)
    }

    private mutating func setView(_ newMode: FollowMode) {
        let old = displayKey
        mode = newMode
        afterStateChange(from: old)
    }

    private mutating func afterStateChange(from old: TextKey?) {
        if displayKey?.page != old?.page || displayKey?.doc != old?.doc {
            viewport.reset()
            searchLine = nil
        } else {
            clampScroll()
        }
    }

    /// Asks for the displayed page's text unless it is cached or already asked for. Waits while
    /// a `JOIN` is unanswered (the room is about to change) and, when following, while a page
    /// turn is in flight (the page is about to change: held keys fetch only where they land).
    private mutating func ensureText(_ fx: inout [PagerEffect]) {
        if outstanding.contains(where: { if case .join = $0 { true } else { false } }) { return }
        if inFlight != nil && mode == .following { return }
        guard connection == .connected, let key = displayKey, let room, (1...room.pageCount).contains(key.page),
              texts.needs(key) else { return }
        texts.markRequested(key)
        outstanding.append(.text(key))
        fx.append(.send("TEXT \(key.page)"))
    }

    private mutating func storeText(_ lines: [String], for key: TextKey) {
        texts.store(lines, for: key, keep: displayKey)
        if key == displayKey {
            clampScroll()
            continuePendingSearch()
        }
    }

    // MARK: Scrolling, search, wrap

    private var contentHeight: Int { max(0, size.rows - 1) }
    private var halfPage: Int { max(1, contentHeight / 2) }

    private mutating func contentRows() -> [LayoutRow] {
        let width = max(1, size.columns)
        let key = displayKey
        if let c = layoutCache, c.key == key, c.help == showingHelp, c.width == width, c.wrap == lineWrap {
            return c.rows
        }
        var lines: [String]
        var origin: [Int]?
        if showingHelp { lines = Self.helpLines }
        else if let key, let t = pageLines(key) {
            if lastSearch != nil || filter != nil {
                let shown = PageSearch.display(t, search: lastSearch?.pattern, filter: filter, colors: options.colors)
                lines = shown.lines
                origin = shown.origin
            } else {
                lines = t
            }
        }
        else if room == nil { lines = ["connecting to \(options.server)…"] }
        else if let page = displayedPage { lines = ["loading page \(page)…"] }
        else { lines = [] }
        var rows = Layout.rows(lines: lines, width: width, wrap: lineWrap, colors: options.colors)
        if let origin { for i in rows.indices { rows[i].line = origin[rows[i].line] } }
        if showingHelp || (key != nil && texts[key!] != nil) {
            layoutCache = LayoutCache(key: key, help: showingHelp, width: width, wrap: lineWrap, rows: rows)
        }
        return rows
    }

    /// The lines of a loaded page as shown: its text, or that text rendered as markdown
    /// (see ``MarkdownChoice``). Search and filter work on these lines.
    private mutating func pageLines(_ key: TextKey) -> [String]? {
        guard let text = texts[key] else { return nil }
        guard options.markdown.rendersMarkdown(file: room?.file) else { return text }
        if let c = markdownCache, c.key == key { return c.lines }
        let lines = MarkdownRenderer.render(markdown: text.joined(separator: "\n"), colors: options.colors)
        markdownCache = (key, lines)
        return lines
    }

    private mutating func scroll(by delta: Int) {
        let rows = contentRows()
        viewport.scroll(by: delta, rowCount: rows.count, height: contentHeight)
    }

    private mutating func clampScroll() { scroll(by: 0) }

    /// Whether the last row of the page is on screen (a page not loaded yet counts as seen whole).
    private var atBottom: Bool {
        mutating get {
            let rows = contentRows()
            return viewport.atBottom(rowCount: rows.count, height: contentHeight)
        }
    }

    private mutating func clampHelp() {
        let wasHelp = showingHelp
        showingHelp = true
        let rows = contentRows()
        showingHelp = wasHelp
        helpOffset = min(max(0, helpOffset), Layout.maxOffset(rowCount: rows.count, height: contentHeight))
    }

    private mutating func topLine() -> Int? {
        let rows = contentRows()
        return viewport.offset < rows.count ? rows[viewport.offset].line : nil
    }

    private mutating func restoreTop(line: Int?) {
        let rows = contentRows()
        if let line, let r = Layout.firstRow(ofLine: line, in: rows) {
            viewport.set(r, rowCount: rows.count, height: contentHeight)
        }
        clampScroll()
    }

    private mutating func toggleWrap() {
        let top = topLine()
        lineWrap.toggle()
        restoreTop(line: top)
        message = lineWrap ? "long lines wrap" : "long lines are chopped"
    }

    private mutating func repeatSearch(reverse: Bool, _ fx: inout [PagerEffect]) {
        guard let last = lastSearch else { message = "no previous search"; return }
        runSearch(forward: reverse ? !last.forward : last.forward, crossPages: true, &fx)
    }

    /// Looks for the next match on the page from the current one (or the screen's top). When
    /// this page has none: `n`/`N` (`crossPages`) go on to the next (previous) page on your own,
    /// detached (see ``continuePendingSearch()``); a new search stays and says `n` goes on.
    private mutating func runSearch(forward: Bool, crossPages: Bool, _ fx: inout [PagerEffect]) {
        guard let pattern = lastSearch?.pattern else { return }
        guard let key = displayKey, let text = pageLines(key) else { message = "the page is not loaded yet"; return }
        let start = searchLine ?? (forward ? (topLine() ?? 0) - 1 : (topLine() ?? 0))
        if let line = PageSearch.find(pattern, in: text, from: start, forward: forward, filter: filter) {
            show(match: line, pattern: pattern)
            return
        }
        guard crossPages, let room, PageSearch.nextPage(after: key.page, pageCount: room.pageCount, forward: forward) != nil else {
            let more = room.flatMap { PageSearch.nextPage(after: key.page, pageCount: $0.pageCount, forward: forward) } != nil
            message = more ? "not on this page: \(pattern.text) · n searches the \(forward ? "next" : "previous") pages"
                : "pattern not found: \(pattern.text)"
            return
        }
        goOnSearching(from: key.page, startPage: key.page, forward: forward)
    }

    /// Moves the view to `page + 1` (or `- 1`) to search there, or says the pattern is not found.
    private mutating func goOnSearching(from page: Int, startPage: Int, forward: Bool) {
        guard let pattern = lastSearch?.pattern, let room else { return }
        guard let next = PageSearch.nextPage(after: page, pageCount: room.pageCount, forward: forward) else {
            pendingSearch = nil
            message = startPage == page ? "pattern not found: \(pattern.text)"
                : "pattern not found: \(pattern.text) (pages \(min(startPage, page))–\(max(startPage, page)))"
            return
        }
        pendingSearch = PendingSearch(page: next, forward: forward, startPage: startPage)
        setView(.detached(viewPage: next))
        message = "searching page \(next) for \(pattern.text)…"
        continuePendingSearch()
    }

    /// Searches the page a cross-page search waits for, once its text is here.
    private mutating func continuePendingSearch() {
        guard let pending = pendingSearch, let pattern = lastSearch?.pattern else { return }
        guard displayedPage == pending.page, case .detached = mode else { pendingSearch = nil; return }
        guard let key = displayKey, let text = pageLines(key) else { return }  // asked for: comes later
        pendingSearch = nil
        let start = pending.forward ? -1 : text.count
        if let line = PageSearch.find(pattern, in: text, from: start, forward: pending.forward, filter: filter) {
            show(match: line, pattern: pattern)
            message = "/\(pattern.text): page \(pending.page) line \(line + 1) · the search detached you"
        } else {
            goOnSearching(from: pending.page, startPage: pending.startPage, forward: pending.forward)
        }
    }

    private mutating func show(match line: Int, pattern: SearchPattern) {
        searchLine = line
        let rows = contentRows()
        viewport.set(Layout.firstRow(ofLine: line, in: rows) ?? viewport.offset, rowCount: rows.count,
                     height: contentHeight)
        message = "/\(pattern.text): line \(line + 1)"
    }

    /// `&pattern`: show only matching lines (`&!pattern`: only the others); empty shows every line again.
    private mutating func applyFilter(_ text: String) {
        let top = topLine()
        if text.isEmpty {
            guard filter != nil else { return }
            filter = nil
            message = "filter off: every line shows"
        } else {
            do throws(SearchPatternError) {
                filter = try LineFilter(text)
            } catch {
                message = error.message
                return
            }
            message = text.hasPrefix("!") ? "&\(text): only lines that do not match show (& Enter: all)"
                : "&\(text): only matching lines show (& Enter: all)"
        }
        layoutCache = nil
        viewport.reset()
        restoreTop(line: top)
        if filter != nil, contentRows().isEmpty { message = "&\(text): no line on this page matches" }
    }

    private mutating func nextRandom() -> Double {
        rng &+= 0x9E37_79B9_7F4A_7C15
        var z = rng
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    // MARK: Rendering

    /// The screen: exactly `size.rows` rows (at least 1); all but the last are page content
    /// (each fits `size.columns`, styles reset at its end), the last is the status line as
    /// plain text (a prompt while one is being typed).
    public mutating func screen() -> [String] {
        let height = contentHeight
        let rows = contentRows()
        let offset = showingHelp ? helpOffset : viewport.offset
        var out = Layout.visible(rows, offset: offset, height: height).map(\.text)
        while out.count < height { out.append(showingHelp ? "" : "~") }
        out.append(statusText())
        return out
    }

    /// The whole frame to write: cursor home, every row followed by erase-to-end-of-line,
    /// the status line in reverse video padded to the full width.
    public mutating func frame() -> String {
        let rows = screen()
        var s = "\u{1B}[H"
        for (i, row) in rows.enumerated() {
            if i == rows.count - 1 {
                let pad = max(0, size.columns - DisplayWidth.of(row))
                s += options.colors == .none ? row + String(repeating: " ", count: pad)
                    : "\u{1B}[7m" + row + String(repeating: " ", count: pad) + "\u{1B}[0m"
            } else {
                s += row + "\u{1B}[K\r\n"
            }
        }
        return s
    }

    /// Where the screen is within the page, when the page is loaded and does not fit the screen.
    public func position() -> PagePosition? {
        guard !showingHelp, let c = layoutCache, !c.help, let key = displayKey, c.key == key,
              c.width == max(1, size.columns), c.wrap == lineWrap, texts[key] != nil,
              c.rows.count > contentHeight else { return nil }
        return PagePosition.of(c.rows, offset: viewport.offset, height: contentHeight)
    }

    /// The status line's text for the current state.
    public func statusText() -> String {
        let width = max(1, size.columns)
        switch prompt {
        case .count(let digits):
            return Layout.truncate("\(digits) · g: go to page \(digits) · j k Space b: \(digits) lines", toWidth: width)
        case .search(let forward, let text):
            let s = (forward ? "/" : "?") + Sanitizer.plainText(text)
            return DisplayWidth.of(s) <= width ? s : String(s.suffix(max(1, width - 1)))
        case .filter(let text):
            let s = "&" + Sanitizer.plainText(text)
            return DisplayWidth.of(s) <= width ? s : String(s.suffix(max(1, width - 1)))
        case nil: break
        }
        if showingHelp { return Layout.truncate("help · q to close", toWidth: width) }
        let line = StatusLine(room: room?.name, page: displayedPage ?? 1, pageCount: room?.pageCount ?? 1,
                              mode: mode, roomPage: room?.page ?? 1, connection: connection,
                              by: room?.by, message: message, position: position(),
                              me: clientName, control: mayTurn)
        return line.render(width: width)
    }
}
