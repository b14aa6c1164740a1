import PageSyncCore

/// A page too long to hold whole, read in pieces as the reader scrolls (see ``PageWindow``).
extension PagerModel {
    // MARK: Long pages

    /// The page `key` is longer than the server sends at once (`bytes` bytes): read it in pieces.
    mutating func startLongPage(_ key: PageKey, bytes: Int) {
        texts.forgetRequest(key)
        longPage = LongPage(key: key, window: PageWindow(pageBytes: bytes))
        restoreKept()  // b turned back to it: read on to its end
    }

    /// Asks for the piece the long page on screen needs next, if any.
    mutating func requestPiece(_ fx: inout [PagerEffect]) {
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
        showPendingMatch()
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
}
