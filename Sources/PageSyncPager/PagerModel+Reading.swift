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
        if newMode == .following { pinned = false }  // however it came back (F, p, the room): D's pin is over
        afterStateChange(from: old)
    }

    mutating func afterStateChange(from old: PageKey?) {
        if let long = longPage, long.key != displayKey { longPage = nil }  // its pieces go with it
        if let kept, kept.key != displayKey { self.kept = nil }
        if let pending = pendingMatch, pending.key != displayKey { pendingMatch = nil }
        if displayKey?.page != old?.page || displayKey?.doc != old?.doc {
            viewport.reset()
            sidewaysShift = 0
            searchLine = nil
            if let key = displayKey, key.page == landingAtEnd {  // b turned back: the end of the page
                kept = (key, .end)
                restoreKept()
            }
            landingAtEnd = nil
        } else {
            clampScroll()
        }
    }

    /// Asks for the displayed page's text unless it is cached or already asked for. Waits while
    /// a `JOIN` is unanswered (the room is about to change) and, when following, while a page
    /// turn is in flight (the page is about to change: held keys fetch only where they land).
    mutating func ensureText(_ fx: inout [PagerEffect]) {
        if outstanding.contains(where: { if case .join = $0 { true } else { false } }) { return }
        if turns.inFlight != nil && mode == .following { return }
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
            restoreKept()
            showPendingMatch()
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
    /// The line is kept when the page's text is the same, and the screen goes to the page's last
    /// screen when the page is shorter than that now.
    mutating func keepLine(_ line: Int, from old: PageKey?) {
        guard let old, let key = displayKey, key.page == old.page, key.doc != old.doc else { return }
        kept = (key, .line(line))
        restoreKept()
    }

    /// Puts the screen where ``kept`` says, once the page's text is here. A long page read in
    /// pieces opens at its end by reading on to it.
    mutating func restoreKept() {
        guard let kept, kept.key == displayKey else { return }
        if kept.place == .end, longPage?.key == kept.key {
            self.kept = nil
            head(to: .end)
            return
        }
        guard texts[kept.key] != nil else { return }
        self.kept = nil
        switch kept.place {
        case .line(let line): restoreTop(line: line)
        case .end: scroll(by: Int.max / 2)
        case .focus: showRoomFocus()
        }
    }

    // MARK: Rows and scrolling

    var contentHeight: Int { max(0, size.rows - 1) }

    /// Whether marked lines show behind a `>` gutter (no colour): while the room's page, on
    /// screen, has a mark. The gutter's two columns are taken from the page's.
    var markGutter: Bool {
        options.colors != .full && !showingHelp && room?.mark != nil && displayedPage == room?.page
    }

    /// The columns the page is laid out in: the screen's, less the mark's gutter.
    var contentWidth: Int { max(1, size.columns - (markGutter ? MarkHighlight.gutterWidth : 0) - numberGutterWidth) }
    var halfPage: Int { max(1, contentHeight / 2) }

    /// The long page on screen with some of it held, if that is what is shown.
    var shownWindow: PageWindow? {
        guard !showingHelp, let long = longPage, long.key == displayKey, !long.window.held.isEmpty else { return nil }
        return long.window
    }

    /// What the rows on screen are laid out from.
    var rowsSource: PageRowsCache.Source {
        PageRowsCache.Source(key: displayKey, help: showingHelp, width: contentWidth, wrap: lineWrap,
                             shift: sidewaysShift, revision: shownWindow.map { $0.revision + 1 } ?? 0)
    }

    mutating func contentRows() -> [LayoutRow] {
        let width = contentWidth
        let key = displayKey
        let source = rowsSource
        if let rows = rowsCache.rows(for: source) { return rows }
        let window = shownWindow
        var lines: [String]
        var origin: [Int]?
        var chopped: Set<Int> = []
        if showingHelp { lines = Self.helpLines }
        else if let key, let t = pageLines(key) {
            chopped = tableLines(key)
            if lastSearch != nil || filter != nil {
                let shown = PageSearch.display(t, search: lastSearch?.pattern, filter: filter, colors: options.colors)
                lines = shown.lines
                origin = shown.origin
                if !chopped.isEmpty { chopped = Set(shown.origin.indices.filter { chopped.contains(shown.origin[$0]) }) }
            } else {
                lines = t
            }
        }
        else if room == nil { lines = ["connecting to \(options.server)…"] }
        else if let page = displayedPage { lines = ["loading page \(page)…"] }
        else { lines = [] }
        var rows = Layout.rows(lines: lines, width: width, wrap: lineWrap, colors: options.colors, shift: source.shift,
                               chopped: chopped)
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
        if let c = markdownCache, c.key == key { return c.page.lines }
        let page = MarkdownRenderer.renderPage(markdown: text.joined(separator: "\n"), colors: options.colors)
        markdownCache = (key, page)
        return page.lines
    }

    /// The lines of the page `key` (as ``pageLines(_:)`` gives them) that are never wrapped: a
    /// markdown table's, chopped and scrolled sideways instead.
    func tableLines(_ key: PageKey) -> Set<Int> {
        markdownCache.flatMap { $0.key == key ? $0.page.tableLines : nil } ?? []
    }

    /// Scrolls by `delta` rows. A screen that moved is no longer on the last match: `n` and `N`
    /// go on from the screen then, as in less.
    mutating func scroll(by delta: Int) {
        let rows = pageRows()
        let before = viewport.offset
        viewport.scroll(by: delta, rowCount: rows.count, height: contentHeight)
        if delta != 0, viewport.offset != before { searchLine = nil }
        if delta != 0 { kept = nil }  // the reader moved: their choice wins over the kept line
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

    /// Puts page line `line` at the top of the screen: the first line shown from it on (under a
    /// filter), or the last screen when the page has no such line.
    mutating func restoreTop(line: Int?) {
        let rows = pageRows()
        if let line {
            let r = Layout.firstRow(atOrAfterLine: line, in: rows) ?? Int.max / 2
            viewport.set(r, rowCount: rows.count, height: contentHeight)
        }
        clampScroll()
    }

    /// `<n>g`, `<n>G`: page line `line` (0-based) at the top, as less goes to a line; past the
    /// end, the last screen. On a long page read in pieces, the lines held (G reads to its end).
    mutating func goToLine(_ line: Int) {
        guard let window = shownWindow else { return restoreTop(line: line) }
        let held = line - window.firstLine
        if held >= 0 && held < window.heldLineCount { return restoreTop(line: held) }
        if let count = window.lineCount, line >= count, window.atEnd { return restoreTop(line: held) }
        message = "line \(line + 1) is not read yet: G reads to the end of the page, < back to its start"
    }

    /// `<n>%`: n percent into the page, at the top of the screen (as less).
    mutating func goToPercent(_ percent: Int) {
        let p = min(max(0, percent), 100)
        if let window = shownWindow {
            guard let count = window.lineCount else {
                message = "the page is not read to its end: G reads it, then % knows its lines"
                return
            }
            return goToLine(count * p / 100)
        }
        guard let key = displayKey, let lines = pageLines(key) else { return }
        goToLine(lines.count * p / 100)
    }

    /// `=`: where you are, in full.
    mutating func info() -> String {
        guard let room, let page = displayedPage else { return "not connected yet" }
        let name = room.title.map { "\(room.name) “\(Sanitizer.plainText($0))”" } ?? room.name
        var parts = [name, "page \(page) of \(room.pageCount)"]
        if let p = position() { parts.append(p.text) } else if let key = displayKey, let lines = pageLines(key) {
            parts.append("\(lines.count) line\(lines.count == 1 ? "" : "s"), all on screen")
        }
        if let file = room.file, file != "-" { parts.append("file " + WireText.percentDecoded(file)) }
        if case .detached = mode { parts.append("room on \(room.page)") }
        parts.append(room.open ? "an open room" : "a presenter room")
        return parts.joined(separator: " · ")
    }

    /// ← →: scroll chopped lines (and, when lines wrap, a markdown table wider than the screen)
    /// sideways by `columns` (right when positive); never left of the line starts, and right only
    /// while a line on screen goes on past the right edge.
    mutating func scrollSideways(by columns: Int) {
        if columns > 0 {
            let rows = contentRows()
            guard Layout.visible(rows, offset: viewport.offset, height: contentHeight).contains(where: \.cutRight) else {
                message = lineWrap ? "long lines wrap here: w chops them" : "nothing more to the right on this screen"
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
}
