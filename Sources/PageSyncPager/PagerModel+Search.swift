import PageSyncCore

/// Search and filter: `/` `?` `n` `N` within the page on screen and on through the room's
/// document (``DocumentSearch``), and `&`.
extension PagerModel {
    mutating func repeatSearch(reverse: Bool, _ fx: inout [PagerEffect]) {
        guard let last = lastSearch else { message = "no previous search"; return }
        runSearch(forward: reverse ? !last.forward : last.forward, show: true, &fx)
    }

    /// Looks for the next match in the lines held of the page on screen (all of a page held whole,
    /// the held pieces of a long one) from the current match (or the screen's top). When there is
    /// none, the search goes on through the document's other pages without moving the view: `n`
    /// and `N` (`show`) then go to the match it finds, on your own (detached); a new search says
    /// where it is, and the next `n` goes there.
    mutating func runSearch(forward: Bool, show goesThere: Bool, _ fx: inout [PagerEffect]) {
        guard let pattern = lastSearch?.pattern else { return }
        guard let key = displayKey, let text = pageLines(key) else { message = "the page is not loaded yet"; return }
        // From the match on screen; else from the screen as less does: a new search forward from
        // its top line, backward from its bottom line (both included); a repeated one (n N) after
        // (before) its top line, less's target line.
        let top = topLine() ?? 0
        let start: Int
        if let searchLine { start = searchLine }
        else if goesThere { start = top }
        else if forward { start = top - 1 }
        else { start = (bottomLine() ?? top) + 1 }
        if let line = PageSearch.find(pattern, in: text, from: start, forward: forward, filter: filter) {
            show(match: line, pattern: pattern)
            return
        }
        guard let room else { return }
        if goesThere, let found = foundMatch, found.pattern == pattern.text, found.forward == forward, found.key.doc == key.doc,
           forward ? found.key.page > key.page : found.key.page < key.page {
            foundMatch = nil
            return go(to: found.key.page, line: found.line, pattern: pattern)
        }
        let search = DocumentSearch(pattern: pattern.text, forward: forward, from: key.page, pageCount: room.pageCount,
                                    doc: key.doc, show: goesThere)
        guard search.next != nil else {
            message = "pattern not found: \(pattern.text)"
            return
        }
        documentSearch = search
        foundMatch = nil
        step(search.start, &fx)
    }

    /// Carries out a step of the document search: searches pages held at once, asks for the
    /// others one at a time.
    private mutating func step(_ first: DocumentSearch.Step, _ fx: inout [PagerEffect]) {
        var next = first
        while let search = documentSearch, let pattern = lastSearch?.pattern {
            switch next {
            case .search(let page):
                let key = PageKey(doc: search.doc, page: page)
                if let raw = texts[key] {
                    let match = PageSearch.find(pattern, in: searchable(raw), from: search.forward ? -1 : Int.max / 2,
                                                forward: search.forward)
                    next = documentSearch!.searched(page: page, match: match)
                    continue
                }
                outstanding.append(.searchText(key))
                fx.append(.send(.text(PageNumber(page) ?? .first)))
                message = "\(searchPrompt)\(pattern.text): searching \(search.progress)… (Esc stops)"
                return
            case .found(let page, let line):
                documentSearch = nil
                if search.show { return go(to: page, line: line, pattern: pattern) }
                foundMatch = FoundMatch(pattern: pattern.text, forward: search.forward,
                                        key: PageKey(doc: search.doc, page: page), line: line)
                message = "\(searchPrompt)\(pattern.text): not on this page; on page \(page), line \(line + 1)"
                    + " · \(search.forward ? "n" : "N") goes there"
                return
            case .notFound(let last):
                documentSearch = nil
                message = "pattern not found: \(pattern.text)"
                    + (last == search.startPage ? "" : " (pages \(min(search.startPage, last))–\(max(search.startPage, last)))")
                return
            }
        }
    }

    /// The text of a page the document search asked for. A page longer than the server sends at
    /// once is searched in the part sent (and not kept: shown, it is read in pieces).
    mutating func searchTextArrived(_ lines: [String], whole: Bool, doc: String, for key: PageKey, _ fx: inout [PagerEffect]) {
        guard let search = documentSearch, search.next == key.page, search.doc == key.doc else { return }
        guard doc == key.doc else { return stopDocumentSearch(because: "the document changed; search again") }
        if whole { texts.store(lines, for: key, keep: displayKey) }
        guard let pattern = lastSearch?.pattern else { return }
        let match = PageSearch.find(pattern, in: searchable(lines), from: search.forward ? -1 : Int.max / 2,
                                    forward: search.forward)
        step(documentSearch!.searched(page: key.page, match: match), &fx)
    }

    /// Ends the document search (Esc, an error).
    mutating func stopDocumentSearch(because reason: String? = nil) {
        guard let search = documentSearch else { return }
        documentSearch = nil
        message = reason.map { "search stopped: \($0)" } ?? "search stopped at \(search.progress)"
    }

    /// A page's lines as search sees them: rendered, when pages are shown as markdown.
    private func searchable(_ raw: [String]) -> [String] {
        guard options.markdown.rendersMarkdown(file: room?.file) else { return raw }
        return MarkdownRenderer.render(markdown: raw.joined(separator: "\n"), colors: options.colors)
    }

    /// Goes to `line` of `page` on your own (detached): the search chose it.
    private mutating func go(to page: Int, line: Int, pattern: SearchPattern) {
        guard let room else { return }
        setView(.detached(viewPage: page))
        pendingMatch = (PageKey(doc: room.doc, page: page), line)
        showPendingMatch()
    }

    /// Shows the match a search went to, once its page's lines are here.
    mutating func showPendingMatch() {
        guard let pending = pendingMatch, pending.key == displayKey, let pattern = lastSearch?.pattern,
              let lines = pageLines(pending.key) else { return }
        pendingMatch = nil
        guard pending.line < lines.count else { return }
        show(match: pending.line, pattern: pattern)
        message = "\(searchPrompt)\(pattern.text): page \(pending.key.page) line \(pending.line + 1) · the search detached you (F follows)"
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
