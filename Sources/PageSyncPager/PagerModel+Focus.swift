import PageSyncCore

/// The room's line and mark on the pager's screen.
///
/// ## Who moves the room's line
/// In a presenter room, the member with control leads: each scroll within the page (any key
/// that moves the screen) wants the room's line to be the document line now at the top, and
/// ``FocusRequests`` sends it, one `LINE` in flight, the newest when the reply comes. `L`
/// pauses and resumes leading. In an open room scrolling stays each reader's own; `p` on the
/// room's page brings everyone to your line. `--follow` never moves the room.
///
/// ## Following the room's line
/// When the room's line or mark changes by someone else's hand (or the room turns the page),
/// a following screen puts the room's line at its top (the last screen when the page ends
/// sooner) and, when the mark changed and is off screen, scrolls to it. Scrolling by yourself then reads on
/// your own within the page: the status line says where the room is, and `F` snaps back; the
/// room's next change brings you back anyway. Lines are the document's (what `TEXT` returns):
/// see ``SourceLines`` for markdown.
///
/// ## Marking
/// With control, `x` marks the line at the top of the screen (a count before it: that many
/// lines); `x` again while the room's mark starts at the top line extends it; `X` clears it.
/// Marked lines show in reverse video, or behind a `>` gutter without colour (`NO_COLOR`,
/// `TERM=dumb`).
extension PagerModel {
    /// How the page on screen maps document lines to the lines shown.
    mutating func sourceLines() -> SourceLines {
        guard let key = displayKey else { return .plain }
        if let window = shownWindow { return .window(firstLine: window.firstLine) }
        guard options.markdown.rendersMarkdown(file: room?.file), texts[key] != nil else { return .plain }
        _ = pageLines(key)
        guard let cached = markdownCache, cached.key == key else { return .plain }
        return .markdown(cached.page.blocks, shownCount: cached.page.lines.count)
    }

    /// Whether scrolling moves the room's line: following a presenter room with control, not paused.
    var leadsLine: Bool { mode == .following && mayTurn && room?.open == false && !leadPaused }

    /// The document line at the top of the screen (nil while the page loads).
    mutating func topDocumentLine() -> Int? {
        guard let key = displayKey, texts[key] != nil || shownWindow != nil, let top = topLine() else { return nil }
        return sourceLines().source(ofShown: top)
    }

    /// The reader moved the screen within the page (a scroll key): a leader's move goes to the
    /// room; anyone else now reads on their own within the page.
    mutating func movedWithinPage(_ fx: inout [PagerEffect]) {
        guard mode == .following, let room, displayedPage == room.page, let top = topDocumentLine() else { return }
        if leadsLine {
            ownScroll = false
            focusRequests.want(line: top)
            flushFocus(&fx)
        } else {
            // An open room nobody has focused (line 1, no mark) is not "elsewhere" to anyone.
            ownScroll = top != room.line && !(room.open && room.line == 1 && room.mark == nil)
        }
    }

    /// Puts the room's line at the top of the screen (the room's focus changed, `F`, or the
    /// page's text arrived for a screen waiting to show it); with `revealMark` (the mark itself
    /// changed), further on when the mark would be off screen. A line moved later wins over an
    /// older mark: a presenter who marked and scrolls on is followed.
    mutating func showRoomFocus(revealMark: Bool = false) {
        guard mode == .following, let room, let key = displayKey, key.page == room.page else { return }
        ownScroll = false
        guard texts[key] != nil || shownWindow != nil else {
            kept = (key, .focus)
            return
        }
        let map = sourceLines()
        restoreTop(line: map.shown(room.line))
        guard revealMark, let mark = room.mark, let top = topLine(), let bottom = bottomLine() else { return }
        let shown = map.shown(mark)
        if shown.upperBound < top || shown.lowerBound > bottom { restoreTop(line: shown.lowerBound) }
    }

    /// After a line changed the room from `old` (nil: a new session or room): a change of page,
    /// line or mark made by someone else (not `ours`: the reply to this pager's own request, or
    /// an event it caused) moves a following screen there. Wishes for another page are dropped.
    mutating func roomFocusMoved(from old: RoomView?, ours: Bool = false) {
        guard let room else { return }
        let pageChanged = old?.page != room.page || old?.doc != room.doc
        if pageChanged { focusRequests.dropWaiting() }
        let focusChanged = old?.page != room.page || old?.line != room.line || old?.mark != room.mark
        guard focusChanged else { return }
        if ours || (old != nil && room.by != nil && room.by == clientName) { return }  // our own change: the screen is there
        showRoomFocus(revealMark: old?.mark != room.mark)
    }

    /// Sends the next `LINE` or `MARK` wished for, if none is in flight and nothing holds it.
    mutating func flushFocus(_ fx: inout [PagerEffect]) {
        guard let room, connection == .connected, turns.inFlight == nil,
              !outstanding.contains(where: { $0.holdsNavigation }) else { return }
        if let command = focusRequests.next(room: room) {
            outstanding.append(.focus(page: room.page))
            fx.append(.send(command))
        }
    }

    /// The reply to a `LINE` or `MARK` asked on page `page`.
    mutating func focusAnswered(_ line: WireLine, page: Int, _ fx: inout [PagerEffect]) {
        let code = line.kind == .ok ? nil : line.errorCode
        if code == nil || code == 409 || code == 416 { reconcile(line, ours: code == nil) }
        focusRequests.answered(errorCode: code, samePage: room?.page == page)
        switch code {
        case nil, 409?: break
        case 403?:
            room?.control = false
            notice(line.text)
        default:
            notice(line.text)
        }
        flushFocus(&fx)
    }

    /// `L`: pauses or resumes leading the room's line.
    mutating func toggleLead(_ fx: inout [PagerEffect]) {
        guard let room else { message = "not connected yet"; return }
        guard !room.open else {
            message = "an open room: scrolling is each reader's own; p brings everyone to your line"
            return
        }
        guard mayTurn else {
            message = options.followOnly ? "follower only (--follow): this pager never moves the room"
                : "leading the room's line needs control (start pagesync with --token)"
            return
        }
        leadPaused.toggle()
        if leadPaused {
            message = "leading paused: your scrolling is your own (L leads again)"
        } else {
            message = "leading: your scrolling moves the room's line"
            movedWithinPage(&fx)
        }
    }

    /// `p` on the room's page: brings the room to the line at the top of your screen.
    mutating func pullLine(_ fx: inout [PagerEffect]) {
        guard let room, let top = topDocumentLine() else { message = "you are on the room's page"; return }
        guard top != room.line else { message = "the room is at your line (\(top)) already"; return }
        focusRequests.want(line: top)
        flushFocus(&fx)
        message = "bringing everyone to line \(top)"
    }

    /// Why this pager may not change the room's mark here (nil: it may).
    private var markRefusal: String? {
        guard let room else { return "not connected yet" }
        if options.followOnly { return "follower only (--follow): this pager never moves the room" }
        if !room.control { return "marking lines needs control (start pagesync with --token)" }
        if displayedPage != room.page || mode != .following { return "marks are on the room's page: F follows it first" }
        return nil
    }

    /// `x` (`<n>x`): marks `count` lines from the top of the screen, or extends the room's mark
    /// by that many when it starts at the top line.
    mutating func markLines(count: Int?, _ fx: inout [PagerEffect]) {
        if let refusal = markRefusal { message = refusal; return }
        guard let room, let key = displayKey, let top = topDocumentLine(), let lines = texts[key]?.count ?? shownWindow?.lineCount
        else { message = "the page is not here yet"; return }
        let n = max(1, count ?? 1)
        let first = room.mark.map { $0.first == top ? $0.first : top } ?? top
        let last = room.mark.map { $0.first == top ? $0.last + n : top + n - 1 } ?? top + n - 1
        guard let range = LineRange(first: first, last: min(last, max(first, lines))) else { return }
        focusRequests.want(mark: range)
        flushFocus(&fx)
        message = "marking lines \(range.text) (X clears)"
    }

    /// `X`: clears the room's mark.
    mutating func clearMark(_ fx: inout [PagerEffect]) {
        if let refusal = markRefusal { message = refusal; return }
        guard room?.mark != nil else { message = "no lines are marked"; return }
        focusRequests.want(mark: nil)
        flushFocus(&fx)
    }

    /// The shown lines the room has marked, when the page on screen is the room's (nil: none).
    mutating func markedShownLines() -> ClosedRange<Int>? {
        guard let room, let mark = room.mark, displayedPage == room.page, let key = displayKey,
              texts[key] != nil || shownWindow != nil else { return nil }
        return sourceLines().shown(mark)
    }

    /// Where the room's line is, for the status line, while this screen reads elsewhere on the
    /// room's page (nil otherwise).
    mutating func roomLineElsewhere() -> Int? {
        guard ownScroll, mode == .following, let room, displayedPage == room.page,
              let top = topDocumentLine(), top != room.line else { return nil }
        return room.line
    }
}
