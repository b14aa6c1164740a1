/// What the pager shows: the screen's rows, the frame written to the terminal, and the status line.
extension PagerModel {
    /// The screen: exactly `size.rows` rows (at least 1); all but the last are page content
    /// (each fits `size.columns`, styles reset at its end), the last is the status line as
    /// plain text (a prompt while one is being typed).
    public mutating func screen() -> [String] {
        let height = contentHeight
        if let overlay {
            var rows = overlay.rows(summary: audience?.text, height: height).prefix(height).map { Layout.truncate($0, toWidth: max(1, size.columns)) }
            while rows.count < height { rows.append("") }
            return rows + [Layout.truncate(message ?? overlay.status, toWidth: max(1, size.columns))]
        }
        let rows = contentRows()
        let offset = showingHelp ? help.offset : viewport.offset
        let marked = showingHelp ? nil : markedShownLines()
        let visible = Layout.visible(rows, offset: offset, height: height)
        let numberWidth = numberGutterWidth
        let numbers = numberWidth > 0 ? rowNumbers(visible) : []
        var out = visible.enumerated().map { i, row in
            let text = MarkHighlight.row(row, marked: marked.map { $0.contains(row.line) } ?? false, gutter: markGutter,
                                         width: contentWidth, colors: options.colors)
            guard numberWidth > 0 else { return text }
            return LineNumbers.gutter(numbers[i], width: numberWidth) + text
        }
        while out.count < height { out.append(showingHelp ? "" : "~") }
        out.append(statusText())
        return out
    }

    /// The whole frame to write: cursor home, every row followed by erase-to-end-of-line,
    /// the status line in reverse video padded to the full width.
    public mutating func frame() -> String {
        ScreenFrame.render(screen(), columns: size.columns, colors: options.colors)
    }

    /// Where the screen is within the page, when the page is loaded and does not fit the screen.
    /// On a long page read in pieces, line numbers are the page's, and until its end has been
    /// read the count is unknown (`/?`) and the percentage is by bytes.
    public func position() -> PagePosition? {
        guard !showingHelp, let key = displayKey else { return nil }
        let window = shownWindow
        if window?.goal == .end { return nil }  // reading on: the rows on screen are from before
        guard texts[key] != nil || window != nil, let rows = rowsCache.rows(for: rowsSource) else { return nil }
        guard let window else {
            guard var position = PagePosition.of(rows, offset: viewport.offset, height: contentHeight) else { return nil }
            if filter != nil {  // the rows are the lines that match: say how many of how many
                let total = markdownCache.flatMap { $0.key == key ? $0.page.lines.count : nil } ?? texts[key]?.count ?? 0
                position.filtered = FilterCount(matching: rows.reduce(0) { $0 + ($1.isLineStart ? 1 : 0) }, total: total)
                return position
            }
            return rows.count > contentHeight ? position : nil
        }
        let visible = Layout.visible(rows, offset: viewport.offset, height: contentHeight)
        guard let first = visible.first, let last = visible.last else { return nil }
        let count = window.lineCount
        return PagePosition(firstLine: window.firstLine + first.line + 1, lastLine: window.firstLine + last.line + 1,
                            lineCount: count ?? window.firstLine + window.heldLineCount,
                            moreBelow: visible.endIndex < rows.count || !window.atEnd,
                            countKnown: count != nil, bytePercent: window.percent(throughLine: last.line))
    }

    /// The status line's text for the current state.
    public mutating func statusText() -> String {
        let width = max(1, size.columns)
        switch prompt {
        case .count(let digits):
            return Layout.truncate("\(digits) · g: line \(digits) · %: \(digits)% · j k Space b: \(digits) lines · ] [: \(digits) pages",
                                   toWidth: width)
        case .page(let digits):
            return Layout.truncate(":" + digits + (digits.isEmpty ? " · n p: next, previous page · a number, Enter: that page"
                                                   : " · Enter: page \(digits)"), toWidth: width)
        case .search(let forward, let text):
            let s = (forward ? "/" : "?") + Sanitizer.plainText(text)
            return DisplayWidth.of(s) <= width ? s : Layout.tail(s, toWidth: max(1, width - 1))
        case .filter(let text):
            let s = "&" + Sanitizer.plainText(text)
            return DisplayWidth.of(s) <= width ? s : Layout.tail(s, toWidth: max(1, width - 1))
        case nil: break
        }
        if showingHelp { return Layout.truncate("help · q to close", toWidth: width) }
        var line = StatusLine(room: room.map { $0.title ?? $0.name }, page: displayedPage ?? 1, pageCount: room?.pageCount ?? 1,
                              mode: mode, roomPage: room?.page ?? 1, connection: connection,
                              by: room?.by, message: message, urgent: messageIsNotice, position: position(),
                              me: clientName, control: mayTurn, unverifiedTLS: options.unverifiedTLS)
        line.roomLine = roomLineElsewhere().map { lineNumbers ? fileFirstLine + $0 - 1 : $0 }  // -N: the file's line
        line.leading = leadsLine && room?.open == false
        line.audience = (room?.control ?? false) ? audience?.text : nil
        line.handUp = handUp
        return line.render(width: width)
    }
}
