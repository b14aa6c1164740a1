/// Reading the page on screen: its text (asked for, cached), its rows, scrolling, wrap and search.
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
    mutating func ensureText(_ fx: inout [PagerEffect]) {
        if outstanding.contains(where: { if case .join = $0 { true } else { false } }) { return }
        if inFlight != nil && mode == .following { return }
        guard connection == .connected, let key = displayKey, let room, (1...room.pageCount).contains(key.page),
              texts.needs(key) else { return }
        texts.markRequested(key)
        outstanding.append(.text(key))
        fx.append(.send("TEXT \(key.page)"))
    }

    mutating func storeText(_ lines: [String], for key: PageKey) {
        texts.store(lines, for: key, keep: displayKey)
        if key == displayKey { clampScroll() }
    }

    // MARK: Rows and scrolling

    var contentHeight: Int { max(0, size.rows - 1) }
    var halfPage: Int { max(1, contentHeight / 2) }

    mutating func contentRows() -> [LayoutRow] {
        let width = max(1, size.columns)
        let key = displayKey
        let source = PageRowsCache.Source(key: key, help: showingHelp, width: width, wrap: lineWrap)
        if let rows = rowsCache.rows(for: source) { return rows }
        let lines: [String]
        if showingHelp { lines = Self.helpLines }
        else if let key, let t = texts[key] { lines = t }
        else if room == nil { lines = ["connecting to \(options.server)…"] }
        else if let page = displayedPage { lines = ["loading page \(page)…"] }
        else { lines = [] }
        let rows = Layout.rows(lines: lines, width: width, wrap: lineWrap, colors: options.colors)
        if showingHelp || (key != nil && texts[key!] != nil) {
            rowsCache.store(rows, for: source)
        }
        return rows
    }

    mutating func scroll(by delta: Int) {
        let rows = contentRows()
        viewport.scroll(by: delta, rowCount: rows.count, height: contentHeight)
    }

    mutating func clampScroll() { scroll(by: 0) }

    /// Whether the last row of the page is on screen (a page not loaded yet counts as seen whole).
    var atBottom: Bool {
        mutating get {
            let rows = contentRows()
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
        let rows = contentRows()
        return viewport.offset < rows.count ? rows[viewport.offset].line : nil
    }

    mutating func restoreTop(line: Int?) {
        let rows = contentRows()
        if let line, let r = Layout.firstRow(ofLine: line, in: rows) {
            viewport.set(r, rowCount: rows.count, height: contentHeight)
        }
        clampScroll()
    }

    mutating func toggleWrap() {
        let top = topLine()
        lineWrap.toggle()
        restoreTop(line: top)
        message = lineWrap ? "long lines wrap" : "long lines are chopped"
    }

    // MARK: Search

    mutating func repeatSearch(reverse: Bool) {
        guard let last = lastSearch else { message = "no previous search"; return }
        runSearch(forward: reverse ? !last.forward : last.forward)
    }

    mutating func runSearch(forward: Bool) {
        guard let pattern = lastSearch?.pattern else { return }
        guard let key = displayKey, let text = texts[key] else { message = "the page is not loaded yet"; return }
        let start = searchLine ?? (forward ? (topLine() ?? 0) - 1 : (topLine() ?? 0))
        guard let i = PageSearch.find(pattern, in: text, after: start, forward: forward) else {
            message = "pattern not found on this page: \(pattern)"
            return
        }
        searchLine = i
        let rows = contentRows()
        viewport.set(Layout.firstRow(ofLine: i, in: rows) ?? viewport.offset, rowCount: rows.count, height: contentHeight)
        message = "/\(pattern): line \(i + 1)"
    }
}
