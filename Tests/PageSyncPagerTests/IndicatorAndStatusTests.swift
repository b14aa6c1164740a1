import Testing
import PageSyncPager

@Suite struct PageIndicatorTests {
    @Test func allDotsWhenTheyFit() {
        #expect(PageIndicator.render(page: 2, pageCount: 4, maxWidth: 80) == "○ ● ○ ○")
        #expect(PageIndicator.render(page: 1, pageCount: 1, maxWidth: 80) == "●")
        #expect(PageIndicator.render(page: 4, pageCount: 4, maxWidth: 7) == "○ ○ ○ ●")
    }

    @Test func condensesAroundTheCurrentPage() {
        #expect(PageIndicator.render(page: 10, pageCount: 20, maxWidth: 13) == "○ … ○ ● ○ … ○")
        #expect(PageIndicator.render(page: 10, pageCount: 20, maxWidth: 15) == "○ … ○ ● ○ ○ … ○")
        #expect(PageIndicator.render(page: 1, pageCount: 20, maxWidth: 13) == "● ○ ○ ○ ○ … ○")
        #expect(PageIndicator.render(page: 20, pageCount: 20, maxWidth: 13) == "○ … ○ ○ ○ ○ ●")
        #expect(PageIndicator.render(page: 3, pageCount: 20, maxWidth: 13) == "○ ○ ● ○ ○ … ○")
        #expect(PageIndicator.render(page: 10, pageCount: 20, maxWidth: 9) == "○ … ● … ○")
        #expect(PageIndicator.render(page: 10, pageCount: 20, maxWidth: 5) == "●")
        #expect(PageIndicator.render(page: 1, pageCount: 20, maxWidth: 5) == "●")
        #expect(PageIndicator.render(page: 4, pageCount: 20, maxWidth: 9) == "○ … ● … ○")
        #expect(PageIndicator.render(page: 3, pageCount: 20, maxWidth: 9) == "○ ○ ● … ○")
    }

    @Test func clampsOutOfRangePages() {
        #expect(PageIndicator.render(page: 9, pageCount: 3, maxWidth: 80) == "○ ○ ●")
        #expect(PageIndicator.render(page: 0, pageCount: 3, maxWidth: 80) == "● ○ ○")
        #expect(PageIndicator.render(page: 1, pageCount: 0, maxWidth: 80) == "●")
        #expect(PageIndicator.render(page: 1, pageCount: 5, maxWidth: 0) == "")
    }

    @Test func propertiesAtManySizes() {
        for count in [1, 2, 3, 5, 9, 10, 20, 99, 1000, 100_000] {
            for maxWidth in 1...61 {
                for page in Set([1, 2, count / 2, count - 1, count].filter { $0 >= 1 }) {
                    let s = PageIndicator.render(page: page, pageCount: count, maxWidth: maxWidth)
                    let tokens = s.split(separator: " ")
                    #expect(s.count <= maxWidth, "\(page)/\(count) @\(maxWidth): \(s)")
                    #expect(tokens.filter { $0 == "●" }.count == 1)
                    #expect(tokens.allSatisfy { ["○", "●", "…"].contains($0) })
                    // The ● sits where the page is: left of it are pages before it.
                    if !s.contains("…") && s.count > 1 {
                        #expect(tokens.count == count)
                        #expect(tokens.firstIndex(of: "●") == page - 1)
                    }
                    // Condensed forms (wider than the bare dot) keep both ends.
                    if s.count >= 5 {
                        #expect(tokens.first == (page == 1 ? "●" : "○"))
                        #expect(tokens.last == (page == count ? "●" : "○"))
                    }
                    // The same width on every page of the document, so a status line never jumps.
                    let widths = Set([1, 2, count / 2, count - 1, count].filter { $0 >= 1 }.map {
                        PageIndicator.render(page: $0, pageCount: count, maxWidth: maxWidth).count
                    })
                    #expect(widths.count == 1, "\(count) pages @\(maxWidth): widths \(widths)")
                    // More room never shows fewer dots.
                    let wider = PageIndicator.render(page: page, pageCount: count, maxWidth: maxWidth + 2)
                    #expect(wider.count >= s.count)
                }
            }
        }
    }
}

@Suite struct StatusLineTests {
    func line(mode: FollowMode = .following, page: Int = 3, roomPage: Int = 3, connection: ConnectionState = .connected,
              by: String? = "ann", message: String? = nil, urgent: Bool = false) -> StatusLine {
        StatusLine(room: "guide", page: page, pageCount: 6, mode: mode, roomPage: roomPage,
                   connection: connection, by: by, message: message, urgent: urgent)
    }

    @Test func following() {
        #expect(line().render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann")
        #expect(line(by: nil).render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following")
    }

    @Test func detachedSaysWhereTheRoomIs() {
        let s = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2).render(width: 100)
        #expect(s == "guide · page 5/6 ○ ○ ○ ○ ● ○ · detached · room on 2/6 · F to follow · by ann")
        #expect(line(mode: .detached(viewPage: 5), page: 5, roomPage: 2).render(width: 30) == "guide · page 5/6 · room 2/6")
    }

    @Test func connectionAndMessage() {
        #expect(line(connection: .reconnecting(attempt: 2)).render(width: 100)
                == "guide · page 3/6 ○ ○ ● ○ ○ ○ · reconnecting… · by ann")
        #expect(line(message: "already on the last page").render(width: 100)
                == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann · already on the last page")
        let before = StatusLine(room: nil, page: 1, pageCount: 1, mode: .following, roomPage: 1,
                                connection: .connecting, by: nil, message: nil)
        #expect(before.render(width: 80) == "connecting…")
    }

    @Test("the dots keep one width on every page, so nothing after them moves")
    func fixedWidthDots() {
        func at(_ page: Int) -> String {
            StatusLine(room: "book", page: page, pageCount: 23, mode: .following, roomPage: page, connection: .connected,
                       by: nil, message: nil).render(width: 100)
        }
        let offsets = Set((1...23).map { at($0).distance(of: "following") })
        #expect(offsets.count == 1, "\((1...23).map(at))")
        #expect(at(1) == "book · page  1/23 ● ○ ○ ○ ○ … ○ · following")
        #expect(at(12) == "book · page 12/23 ○ … ○ ● ○ … ○ · following")
    }

    @Test("parts give way by priority: by, you, dots, hint, position, follow state, notice, room; page n/N stays")
    func shrinksByPriority() {
        var s = line(by: "bob")
        s.me = "ann"
        s.control = true
        s.position = PagePosition(firstLine: 10, lastLine: 32, lineCount: 41, moreBelow: true)
        #expect(s.render(width: 180) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓ · by bob · you: ann ⚑")
        #expect(s.render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓ · you: ann ⚑")
        #expect(s.render(width: 70) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓")
        #expect(s.render(width: 60) == "guide · page 3/6 · following · lines 10-32/41 78% more↓")
        #expect(s.render(width: 40) == "guide · page 3/6 · following · 78% more↓")
        #expect(s.render(width: 30) == "guide · page 3/6 · following")
        #expect(s.render(width: 20) == "guide · page 3/6")
        #expect(s.render(width: 12) == "page 3/6")
        for w in 0...200 { #expect(DisplayWidth.of(s.render(width: w)) <= w) }
        for w in 16...200 { #expect(s.render(width: w).hasPrefix("guide · page 3/6"), "\(w): \(s.render(width: w))") }
        let d = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2, connection: .reconnecting(attempt: 1), message: "x")
        for w in 0...120 { #expect(DisplayWidth.of(d.render(width: w)) <= w) }
    }

    @Test("a hint gives way before the position; a notice (a warning, the server's reason) after it and the follow state, whole while it fits")
    func hintsAndNotices() {
        var s = line(by: nil)
        s.position = PagePosition(firstLine: 1, lastLine: 23, lineCount: 41, moreBelow: true)
        s.message = "not on this page: HISTFILE · n searches the next pages"
        #expect(s.render(width: 120) == "guide · page 3/6 · following · lines 1-23/41 56% more↓ · not on this page: HISTFILE · n searches the next pages")
        #expect(s.render(width: 100) == "guide · page 3/6 · following · 56% more↓ · not on this page: HISTFILE · n searches the next pages",
                "the short position makes room for the hint")
        #expect(s.render(width: 70) == "guide · page 3/6 · following · 56% more↓ · not on this page: …")
        #expect(s.render(width: 50) == "guide · page 3/6 · following · 56% more↓")
        s.urgent = true
        s.message = "Space again turns the page for everyone (5 readers)"
        #expect(s.render(width: 100) == "guide · page 3/6 · following · 56% more↓ · Space again turns the page for everyone (5 readers)")
        #expect(s.render(width: 90) == "guide · page 3/6 · following · Space again turns the page for everyone (5 readers)")
        #expect(s.render(width: 80) == "guide · page 3/6 · Space again turns the page for everyone (5 readers)",
                "the follow state gives way before a notice")
        #expect(s.render(width: 60) == "guide · page 3/6 · Space again turns the page for everyone …")
        let reconnecting = StatusLine(room: "guide", page: 7, pageCount: 23, mode: .following, roomPage: 7,
                                      connection: .reconnecting(attempt: 3), by: "ann", message: "server: server shutting down",
                                      urgent: true, position: PagePosition(firstLine: 46, lastLine: 68, lineCount: 90, moreBelow: true))
        #expect(reconnecting.render(width: 80) == "guide · page  7/23 · reconnecting… · 75% more↓ · server: server shutting down")
        #expect(reconnecting.render(width: 65) == "guide · page  7/23 · reconnecting… · server: server shutting down")
        #expect(reconnecting.render(width: 50) == "guide · page  7/23 · server: server shutting down")
    }

    @Test func unverifiedTLSIsSaidFirstAndNeverDropped() {
        var s = line()
        s.unverifiedTLS = true
        #expect(s.render(width: 100) == "TLS NOT VERIFIED · guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann")
        #expect(s.render(width: 40) == "TLS NOT VERIFIED · guide · page 3/6")
        #expect(s.render(width: 20).hasPrefix("TLS NOT VERIFIED"))
        for w in 0...120 { #expect(DisplayWidth.of(s.render(width: w)) <= w) }
        let before = StatusLine(room: nil, page: 1, pageCount: 1, mode: .following, roomPage: 1,
                                connection: .connecting, by: nil, message: nil, unverifiedTLS: true)
        #expect(before.render(width: 80) == "TLS NOT VERIFIED · connecting…")
    }

    @Test func ownNameControlMarkAndPosition() {
        var s = line(by: "bob")
        s.me = "ann"
        s.control = true
        #expect(s.render(width: 100) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by bob · you: ann ⚑")
        s.control = false
        #expect(s.render(width: 100) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by bob · you: ann")
        s.position = PagePosition(firstLine: 10, lastLine: 32, lineCount: 41, moreBelow: true)
        #expect(s.render(width: 120)
                == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓ · by bob · you: ann")
    }

    @Test("under a filter the position says how many lines match, of how many")
    func filterCount() {
        var position = PagePosition(firstLine: 1, lastLine: 23, lineCount: 6618, moreBelow: true)
        position.filtered = FilterCount(matching: 47, total: 6678)
        #expect(position.text == "47 of 6,678 lines match")
        var s = line(by: nil)
        s.position = position
        #expect(s.render(width: 100) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · 47 of 6,678 lines match more↓")
        #expect(position.shortText == "47/6,678 match")
        #expect(PagePosition.grouped(1_234_567) == "1,234,567" && PagePosition.grouped(999) == "999" && PagePosition.grouped(0) == "0")
    }

    @Test func cutsAtWordsNotInsideThem() {
        #expect(StatusLine.cut("detached · room on 2/6 · F to follow", toWidth: 20) == "detached · room on …")
        #expect(StatusLine.cut("abc defghij", toWidth: 8) == "abc …")
        #expect(StatusLine.cut("abcdefghij", toWidth: 5) == "abcd…")
        #expect(StatusLine.cut("short", toWidth: 5) == "short")
        let hint = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2, by: nil,
                        message: "pulling needs control: start with --token")
        #expect(hint.render(width: 80) == "guide · page 5/6 · detached · room on 2/6 · F to follow · pulling needs …")
        for w in 0...120 { #expect(DisplayWidth.of(hint.render(width: w)) <= w) }
    }

    @Test func aLongRoomNameIsCutBeforePageNOfN() {
        let s = StatusLine(room: "A very long title for a talk", page: 3, pageCount: 12, mode: .following, roomPage: 3,
                           connection: .connected, by: nil, message: nil)
        #expect(s.render(width: 30) == "A very long … · page  3/12")
        #expect(s.render(width: 50) == "A very long title for a talk · page  3/12")
    }

    @Test func serverTextIsSanitized() {
        let s = StatusLine(room: "r\u{1B}]0;x\u{07}", page: 1, pageCount: 1, mode: .following, roomPage: 1,
                           connection: .connected, by: "a\u{1B}[2Jb", message: "bad\u{07}")
        #expect(s.render(width: 80) == "r · page 1/1 ● · following · by ab · bad^G")
    }
}

extension String {
    /// The character offset of `other` in the string (its end when absent).
    func distance(of other: String) -> Int {
        let chars = Array(self)
        let target = Array(other)
        for i in 0...max(0, chars.count - target.count) where Array(chars[i..<min(chars.count, i + target.count)]) == target {
            return i
        }
        return chars.count
    }
}
