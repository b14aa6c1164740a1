import PageSyncCore

/// Reading the page on screen: its text (asked for, cached), its lines as shown (markdown rendered,
/// search matches marked, a filter applied), its rows, scrolling, wrap and search.
extension PagerModel {
    // MARK: Text

    var displayKey: PageKey? {
        guard let room, let page = displayedPage else { return nil }
        return PageKey(doc: room.doc, page: page)
    }

    mutating func setView(_ newMode: FollowMode) {
        let old = displayKey
        mode = newMode
        afterStateChange(from: old)
    }

    mutating func afterStateChange(from old: PageKey?) {
        if let long = longPage, long.key != displayKey { longPage = nil }  // its pieces go with it
        if let kept = keptLine, kept.key != displayKey { keptLine = nil }
        if displayKey?.page != old?.page || displayKey?.doc != old?.doc {
            viewport.reset()
            sidewaysShift = 0
            searchLine = nil
        } else {
            clampScroll()
        }
    }

    /// Asks for the displayed page's text unless it is cached or already asked for. Waits while
    /// a `JOIN` is unanswered (the room is about to change) and, when following, while a page
    /// turn is in flight (the page is about to change: held keys fetch only where they land).
    mutating func ensureText(_ fx: inout [PagerEffect]) {
        if outstanding.contains(where: { if case .join = $0 { true } else { false } }) { return }
        if inFlight != nil && mode == .following { return }
        guard connection == .connected, let key = displayKey, let room, (1...room.pageCount).contains(key.page) else { return }
        if let long = longPage, long.key == key {
            requestPiece(&fx)
            return
        }
        guard texts.needs(key) else { return }
        texts.markRequested(key)
        outstanding.append(.text(key))
        fx.append(.send(.text(PageNumber(key.page) ?? .first)))
    }

    mutating func storeText(_ lines: [String], for key: PageKey) {
        texts.store(lines, for: key, keep: displayKey)
        if key == displayKey {
            clampScroll()
            restoreKeptLine()
            continuePendingSearch()
        }
    }

    /// The page line at the top of the screen, when the page on screen is held whole (nil while
    /// it loads, or on a long page read in pieces, whose lines are the window's).
    mutating func readingLine() -> Int? {
        guard let key = displayKey, texts[key] != nil, longPage?.key != key else { return nil }
        return topLine()
    }

    /// After a state change: when the page shown is the same page of a document that changed on
    /// disk (same number, new `doc=`), the reader's `line` goes back to the top of the screen
    /// once the new text is here, as less keeps its place when it reloads a file.
    mutating func keepLine(_ line: Int, from old: PageKey?) {
        guard let old, let key = displayKey, key.page == old.page, key.doc != old.doc else { return }
        keptLine = (key, line)
        restoreKeptLine()
    }

    private mutating func restoreKeptLine() {
        guard let kept = keptLine, kept.key == displayKey, texts[kept.key] != nil else { return }
        keptLine = nil
        restoreTop(line: kept.line)
    }

    // MARK: Rows and scrolling

    var contentHeight: Int { max(0, size.rows - 1) }
    var halfPage: Int { max(1, contentHeight / 2) }

    /// The long page on screen with some of it held, if that is what is shown.
    var shownWindow: PageWindow? {
        guard !showingHelp, let long = longPage, long.key == displayKey, !long.window.held.isEmpty else { return nil }
        return long.window
    }

    /// What the rows on screen are laid out from.
    var rowsSource: PageRowsCache.Source {
        PageRowsCache.Source(key: displayKey, help: showingHelp, width: max(1, size.columns), wrap: lineWrap,
                             shift: lineWrap ? 0 : sidewaysShift, revision: shownWindow.map { $0.revision + 1 } ?? 0)
    }

    mutating func contentRows() -> [LayoutRow] {
        let width = max(1, size.columns)
        let key = displayKey
        let source = rowsSource
        if let rows = rowsCache.rows(for: source) { return rows }
        let window = shownWindow
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
        var rows = Layout.rows(lines: lines, width: width, wrap: lineWrap, colors: options.colors, shift: source.shift)
        if let origin { for i in rows.indices { rows[i].line = origin[rows[i].line] } }
        if showingHelp || window != nil || (key != nil && texts[key!] != nil) {
            rowsCache.store(rows, for: source)
        }
        return rows
    }

    /// The page's rows even while the help covers it: what the page's viewport scrolls over
    /// (with the help's rows, a resize or the room's news moved the page under the help).
    mutating func pageRows() -> [LayoutRow] {
        guard showingHelp else { return contentRows() }
        showingHelp = false
        let rows = contentRows()
        showingHelp = true
        return rows
    }

    /// The lines of the page on screen as shown, before search and filter: a page held whole is
    /// its text, or that text rendered as markdown (see ``MarkdownChoice``); a long page read in
    /// pieces is the lines held (see ``PageWindow``), shown as sent: its rows stand for the held
    /// lines one for one, which reading on and the position need. Search and filter work on these lines.
    mutating func pageLines(_ key: PageKey) -> [String]? {
        guard let text = texts[key] else { return shownWindow?.lines() }
        guard options.markdown.rendersMarkdown(file: room?.file) else { return text }
        if let c = markdownCache, c.key == key { return c.lines }
        let lines = MarkdownRenderer.render(markdown: text.joined(separator: "\n"), colors: options.colors)
        markdownCache = (key, lines)
        return lines
    }

    /// Scrolls by `delta` rows. A screen that moved is no longer on the last match: `n` and `N`
    /// go on from the screen then, as in less.
    mutating func scroll(by delta: Int) {
        let rows = pageRows()
        let before = viewport.offset
        viewport.scroll(by: delta, rowCount: rows.count, height: contentHeight)
        if delta != 0, viewport.offset != before { searchLine = nil }
        if delta != 0 { keptLine = nil }  // the reader moved: their choice wins over the kept line
    }

    mutating func clampScroll() { scroll(by: 0) }

    /// Whether the last row of the page is on screen (a page not loaded yet counts as seen whole).
    var atBottom: Bool {
        mutating get {
            let rows = pageRows()
            return viewport.atBottom(rowCount: rows.count, height: contentHeight)
        }
    }

    mutating func clampHelp() {
        let wasHelp = showingHelp
        showingHelp = true
        let rows = contentRows()
        showingHelp = wasHelp
        help.clamp(maxOffset: Layout.maxOffset(rowCount: rows.count, height: contentHeight))
    }

    mutating func topLine() -> Int? {
        let rows = pageRows()
        return viewport.offset < rows.count ? rows[viewport.offset].line : nil
    }

    /// The page line of the last row on screen (nil when nothing is).
    mutating func bottomLine() -> Int? {
        Layout.visible(pageRows(), offset: viewport.offset, height: contentHeight).last?.line
    }

    mutating func restoreTop(line: Int?) {
        let rows = pageRows()
        if let line, let r = Layout.firstRow(ofLine: line, in: rows) {
            viewport.set(r, rowCount: rows.count, height: contentHeight)
        }
        clampScroll()
    }

    /// ← →: scroll chopped lines sideways by `columns` (right when positive); never left of the
    /// line starts, and right only while a line on screen goes on past the right edge.
    mutating func scrollSideways(by columns: Int) {
        guard !lineWrap else { message = "long lines wrap here: w chops them"; return }
        if columns > 0 {
            let rows = contentRows()
            guard Layout.visible(rows, offset: viewport.offset, height: contentHeight).contains(where: \.cutRight) else {
                message = "nothing more to the right on this screen"
                return
            }
        } else if sidewaysShift == 0 {
            message = "already at the left edge"
            return
        }
        sidewaysShift = max(0, sidewaysShift + columns)
        message = sidewaysShift == 0 ? "back at the left edge" : "from column \(sidewaysShift + 1): ← → scroll sideways"
    }

    mutating func toggleWrap() {
        let top = topLine()
        sidewaysShift = 0
        lineWrap.toggle()
        restoreTop(line: top)
        message = lineWrap ? "long lines wrap" : "long lines are chopped: ← → scroll sideways, > marks a cut"
    }

    // MARK: Long pages

    /// The page `key` is longer than the server sends at once (`bytes` bytes): read it in pieces.
    mutating func startLongPage(_ key: PageKey, bytes: Int) {
        texts.forgetRequest(key)
        longPage = LongPage(key: key, window: PageWindow(pageBytes: bytes))
    }

    /// Asks for the piece the long page on screen needs next, if any.
    private mutating func requestPiece(_ fx: inout [PagerEffect]) {
        guard let long = longPage, long.failure == nil else { return }
        let rows = contentRows()
        let visible = shownWindow == nil ? [] : Layout.visible(rows, offset: viewport.offset, height: contentHeight)
        guard let offset = long.window.nextRequest(top: visible.first?.line ?? 0, bottom: visible.last?.line ?? 0,
                                                   screen: contentHeight) else { return }
        longPage?.window.markRequested(offset)
        outstanding.append(.piece(long.key, from: offset))
        fx.append(.send(.textFrom(PageNumber(long.key.page) ?? .first, offset: offset)))
    }

    /// A piece of the long page `key` arrived (the answer to `TEXT <n> FROM <from>`).
    mutating func receivePiece(_ header: WireLine, _ lines: [String], cut: Bool, key: PageKey, from: Int) {
        guard let long = longPage, long.key == key else { return }  // the reader has moved on
        guard !cut else {
            return pieceFailed(key, because: "a piece came longer than the pager takes (\(ReplyAssembler.maxContentBytes >> 20) MiB)")
        }
        guard header.fields["doc"].map({ $0 == key.doc }) ?? true, header.int("from") == from,
              let next = header.int("next"), let bytes = header.int("bytes") else {
            return pieceFailed(key, because: "the server's answer did not fit the page (was it edited?)")
        }
        let anchor = topAnchor()
        let goal = long.window.goal
        let piece = PagePiece(from: from, next: next, split: header.yesNo("split") ?? false, lines: lines)
        guard longPage!.window.receive(piece, pageBytes: bytes) else {
            return pieceFailed(key, because: "the server's answer did not fit the page (was it edited?)")
        }
        place(after: anchor, goal: goal)
        continuePendingSearch()
    }

    /// A piece could not be had: the page stays cut where the held pieces end, and the status line says so.
    mutating func pieceFailed(_ key: PageKey, because reason: String) {
        guard let long = longPage, long.key == key else { return }
        if long.window.held.isEmpty {  // nothing read: the page shows why, as any page that cannot be loaded
            longPage = nil
            storeText(["[page \(key.page) could not be loaded: \(reason)]"], for: key)
            message = "page \(key.page) could not be read in pieces: \(reason)"
            return
        }
        longPage?.window.stop()
        let failure = "page \(key.page) is cut here: \(reason)"
        longPage?.failure = failure
        message = failure
    }

    /// Whether the long page on screen goes on beyond the held lines, below (`down`) or above.
    mutating func pageGoesOn(down: Bool) -> Bool {
        guard let window = shownWindow else { return false }
        return down ? !window.atEnd : !window.atStart
    }

    /// `>`/`<` on a long page: read on to its end (or back to its start).
    mutating func head(to goal: PageWindow.Goal) {
        guard longPage?.key == displayKey, longPage?.failure == nil else { return }
        guard pageGoesOn(down: goal == .end) else { longPage?.window.goal = nil; return }
        longPage?.window.goal = goal
        message = goal == .end ? "reading to the end of the page…" : "back to the start of the page…"
    }

    /// The page line at the top of the screen and how many rows into it the screen starts.
    private mutating func topAnchor() -> (line: Int, row: Int)? {
        guard let window = shownWindow else { return nil }
        let rows = contentRows()
        guard viewport.offset < rows.count else { return nil }
        let line = rows[viewport.offset].line
        return (window.firstLine + line, viewport.offset - (Layout.firstRow(ofLine: line, in: rows) ?? viewport.offset))
    }

    /// Puts the screen back where it was after the held pieces changed, or where the reader was going.
    private mutating func place(after anchor: (line: Int, row: Int)?, goal: PageWindow.Goal?) {
        guard let window = shownWindow else { return }
        if window.goal == .end {  // on the way: the screen stays, the status line counts
            message = "reading to the end of the page… \(window.reachedPercent)%"
            return
        }
        let rows = contentRows()
        let height = contentHeight
        switch goal {
        case .end:
            viewport.set(Int.max / 2, rowCount: rows.count, height: height)
            message = nil
        case .start where window.atStart:
            viewport.reset()
            message = nil
        default:
            guard let anchor else { return clampScroll() }
            let line = anchor.line - window.firstLine
            if line < 0 { viewport.reset() }
            else if let r = Layout.firstRow(ofLine: line, in: rows) { viewport.set(r + anchor.row, rowCount: rows.count, height: height) }
            else { viewport.set(Int.max / 2, rowCount: rows.count, height: height) }
        }
    }

    // MARK: Search and filter

    mutating func repeatSearch(reverse: Bool, _ fx: inout [PagerEffect]) {
        guard let last = lastSearch else { message = "no previous search"; return }
        runSearch(forward: reverse ? !last.forward : last.forward, crossPages: true, &fx)
    }

    /// Looks for the next match in the lines held of the page on screen (all of a page held whole,
    /// the held pieces of a long one) from the current match (or the screen's top). When there is
    /// none: `n`/`N` (`crossPages`) go on to the next (previous) page on your own, detached (see
    /// ``continuePendingSearch()``); a new search stays and says `n` goes on.
    mutating func runSearch(forward: Bool, crossPages: Bool, _ fx: inout [PagerEffect]) {
        guard let pattern = lastSearch?.pattern else { return }
        guard let key = displayKey, let text = pageLines(key) else { message = "the page is not loaded yet"; return }
        // From the match on screen; else from the screen as less does: a new search forward from
        // its top line, backward from its bottom line (both included); a repeated one (n N) after
        // (before) its top line, less's target line.
        let top = topLine() ?? 0
        let start: Int
        if let searchLine { start = searchLine }
        else if crossPages { start = top }
        else if forward { start = top - 1 }
        else { start = (bottomLine() ?? top) + 1 }
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
        let origin = SearchOrigin(mode: mode, key: key, topLine: topLine(), match: searchLine)
        goOnSearching(from: key.page, startPage: key.page, forward: forward, origin: origin)
    }

    /// Moves the view to `page + 1` (or `- 1`) to search there, or says the pattern is not found
    /// and goes back to `origin`, as less stays where it was.
    mutating func goOnSearching(from page: Int, startPage: Int, forward: Bool, origin: SearchOrigin) {
        guard let pattern = lastSearch?.pattern, let room else { return }
        guard let next = PageSearch.nextPage(after: page, pageCount: room.pageCount, forward: forward) else {
            pendingSearch = nil
            goBack(to: origin)
            message = startPage == page ? "pattern not found: \(pattern.text)"
                : "pattern not found: \(pattern.text) (pages \(min(startPage, page))–\(max(startPage, page)))"
            return
        }
        pendingSearch = PendingSearch(page: next, forward: forward, startPage: startPage, origin: origin)
        setView(.detached(viewPage: next))
        message = "searching page \(next) for \(pattern.text)…"
        continuePendingSearch()
    }

    /// Searches the page a cross-page search waits for, once its text (or a long page's first
    /// piece) is here.
    mutating func continuePendingSearch() {
        guard let pending = pendingSearch, let pattern = lastSearch?.pattern else { return }
        guard displayedPage == pending.page, case .detached = mode else { pendingSearch = nil; return }
        guard let key = displayKey, let text = pageLines(key) else { return }  // asked for: comes later
        pendingSearch = nil
        let start = pending.forward ? -1 : text.count
        if let line = PageSearch.find(pattern, in: text, from: start, forward: pending.forward, filter: filter) {
            show(match: line, pattern: pattern)
            message = "\(searchPrompt)\(pattern.text): page \(pending.page) line \(line + 1) · the search detached you"
        } else {
            goOnSearching(from: pending.page, startPage: pending.startPage, forward: pending.forward, origin: pending.origin)
        }
    }

    /// Back to where a search that found nothing started: following again if you were (on the
    /// room's page as it is now), or your own page; the same line at the top and the same match
    /// when that page is still the one shown. The line is kept like an edited page's: applied
    /// now if the page's text is still held, else when it comes back (a search through more
    /// pages than the cache holds lets it go).
    private mutating func goBack(to origin: SearchOrigin) {
        setView(origin.mode)
        guard let key = displayKey, key == origin.key else { return }
        if let line = origin.topLine {
            keptLine = (key, line)
            restoreKeptLine()
        }
        searchLine = origin.match
    }

    private mutating func show(match line: Int, pattern: SearchPattern) {
        searchLine = line
        let rows = contentRows()
        viewport.set(Layout.firstRow(ofLine: line, in: rows) ?? viewport.offset, rowCount: rows.count,
                     height: contentHeight)
        let number = (shownWindow?.firstLine ?? 0) + line + 1
        message = "\(searchPrompt)\(pattern.text): line \(number)"
    }

    /// `/` or `?`, as the last search was typed (n and N keep it), for the match message.
    private var searchPrompt: String { lastSearch?.forward == false ? "?" : "/" }

    /// `&pattern`: show only matching lines (`&!pattern`: only the others); empty shows every line again.
    mutating func applyFilter(_ text: String) {
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
        rowsCache.forget()
        viewport.reset()
        restoreTop(line: top)
        if filter != nil, contentRows().isEmpty { message = "&\(text): no line on this page matches" }
    }
}
