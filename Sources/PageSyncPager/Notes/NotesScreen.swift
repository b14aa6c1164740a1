import PageSyncCore

/// The notes view's screen, top to bottom: a title row (the room, page n of N, the document's
/// title), the current page's notes (wrapped, scrolled), the keys when asked for, the next
/// page's heading, and the status line (the page, the timer, the clock, and the last message
/// or the connection's state) in reverse video.
struct NotesScreen {
    let model: NotesViewModel

    /// The key list shown by `h`.
    static var keyRows: [String] { NotesKeys.summary }

    /// The notes' lines as screen rows at `width` columns (wrapped).
    static func noteRows(_ lines: [String], width: Int, colors: ColorPolicy) -> [LayoutRow] {
        Layout.rows(lines: lines, width: width, wrap: true, colors: colors)
    }

    func render() -> String {
        let width = max(1, model.size.columns)
        let height = max(1, model.size.rows)
        var rows: [String] = []
        if height >= 3 { rows.append(bold(Layout.truncate(title, toWidth: width))) }
        let bodyHeight = model.notesHeight
        rows += body(width: width, height: bodyHeight)
        if model.showingKeys, height >= 3 + NotesScreen.keyRows.count {
            rows += NotesScreen.keyRows.map { Layout.truncate($0, toWidth: width) }
        }
        if height >= 2 { rows.append(Layout.truncate(nextLine, toWidth: width)) }
        rows.append(StatusLine.cut(status, toWidth: width))
        return ScreenFrame.render(rows, columns: width, colors: model.options.colors)
    }

    private func bold(_ text: String) -> String {
        model.options.colors == .none ? text : "\u{1B}[1m" + text + "\u{1B}[0m"
    }

    private var title: String {
        guard let room = model.room else { return "Speaker notes" }
        var t = "Speaker notes · room \(room.name) · page \(room.page) of \(room.pageCount)"
        if let name = room.title ?? room.file.map(WireText.percentDecoded) { t += " · " + Sanitizer.plainText(name) }
        return t
    }

    private func body(width: Int, height: Int) -> [String] {
        guard height > 0 else { return [] }
        var rows: [String]
        if let notes = model.notes {
            let laid = NotesScreen.noteRows(notes.lines, width: width, colors: model.options.colors)
            rows = laid.isEmpty || notes.lines.allSatisfy({ $0.isEmpty })
                ? ["(no notes for page \(notes.key.page))"]
                : Layout.visible(laid, offset: model.scroll, height: height).map(\.text)
        } else if let room = model.room, model.connection == .connected {
            rows = ["(notes of page \(room.page)…)"]
        } else {
            rows = []
        }
        rows = Array(rows.prefix(height))
        return rows + Array(repeating: "", count: height - rows.count)
    }

    private var nextLine: String {
        guard let room = model.room else { return "" }
        guard let next = model.nextPage(of: room) else { return "Next: (this is the last page)" }
        let headline = model.headlines[PageKey(doc: room.doc, page: next)]
        switch headline {
        case nil: return "Next: page \(next)"
        case ""?: return "Next: page \(next) (no text)"
        case let text?: return "Next: page \(next) · " + text
        }
    }

    private var status: String {
        var parts: [String] = []
        if let room = model.room { parts.append("page \(room.page)/\(room.pageCount)") }
        switch model.connection {
        case .connected: break
        case .connecting: parts.append("connecting to \(model.options.server)…")
        case .reconnecting(let attempt): parts.append("reconnecting… (attempt \(attempt))")
        }
        if let typed = model.typedPage { parts.append("go to page: \(typed)") }
        if let elapsed = model.clock.elapsed(now: model.now?.monotonicMilliseconds) { parts.append(elapsed) }
        if let now = model.now { parts.append(now.wallClock) }
        if let message = model.message { parts.append(Sanitizer.plainText(message)) }
        else if !model.showingKeys { parts.append("] next  [ back  h keys  q quit") }
        if model.options.unverifiedTLS { parts.insert("TLS NOT VERIFIED", at: 0) }
        return parts.joined(separator: " · ")
    }
}
