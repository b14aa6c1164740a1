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
        #expect(PageIndicator.render(page: 1, pageCount: 20, maxWidth: 5) == "● … ○")
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
              by: String? = "ann", message: String? = nil) -> StatusLine {
        StatusLine(room: "guide", page: page, pageCount: 6, mode: mode, roomPage: roomPage,
                   connection: connection, by: by, message: message)
    }

    @Test func following() {
        #expect(line().render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann")
        #expect(line(by: nil).render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following")
    }

    @Test func detachedSaysWhereTheRoomIs() {
        let s = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2).render(width: 100)
        #expect(s == "guide · page 5/6 ○ ○ ○ ○ ● ○ · detached · room on 2/6 · F to follow · by ann")
    }

    @Test func connectionAndMessage() {
        #expect(line(connection: .reconnecting(attempt: 2)).render(width: 100)
                == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · reconnecting… · by ann")
        #expect(line(message: "already on the last page").render(width: 100)
                == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann · already on the last page")
        let before = StatusLine(room: nil, page: 1, pageCount: 1, mode: .following, roomPage: 1,
                                connection: .connecting, by: nil, message: nil)
        #expect(before.render(width: 80) == "connecting…")
    }

    @Test func shrinksGracefully() {
        let s = line()
        #expect(s.render(width: 40) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following")
        #expect(s.render(width: 30) == "page 3/6 ○ ○ ● … ○ · following")
        #expect(s.render(width: 12) == "page 3/6 …")
        for w in 0...120 { #expect(DisplayWidth.of(s.render(width: w)) <= w) }
        let d = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2, connection: .reconnecting(attempt: 1), message: "x")
        for w in 0...120 { #expect(DisplayWidth.of(d.render(width: w)) <= w) }
    }

    @Test func unverifiedTLSIsSaidFirstAndNeverDropped() {
        var s = line()
        s.unverifiedTLS = true
        #expect(s.render(width: 100) == "TLS NOT VERIFIED · guide · page 3/6 ○ ○ ● ○ ○ ○ · following · by ann")
        #expect(s.render(width: 40) == "TLS NOT VERIFIED · page 3/6 · following")
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
        // Short of room: who turned the page goes first, then your name, then the room name.
        s.control = true
        #expect(s.render(width: 80) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓ · you: ann ⚑")
        #expect(s.render(width: 70) == "guide · page 3/6 ○ ○ ● ○ ○ ○ · following · lines 10-32/41 78% more↓")
        #expect(s.render(width: 60) == "page 3/6 ○ ○ ● … ○ · following · lines 10-32/41 78% more↓")
    }

    @Test func cutsAtWordsNotInsideThem() {
        #expect(StatusLine.cut("detached · room on 2/6 · F to follow", toWidth: 20) == "detached · room on …")
        #expect(StatusLine.cut("abc defghij", toWidth: 8) == "abc …")
        #expect(StatusLine.cut("abcdefghij", toWidth: 5) == "abcd…")
        #expect(StatusLine.cut("short", toWidth: 5) == "short")
        let hint = line(mode: .detached(viewPage: 5), page: 5, roomPage: 2, by: nil,
                        message: "pulling needs control: start with --token")
        let cut = hint.render(width: 80)
        #expect(cut == "guide · page 5/6 ○ … ○ ● ○ · detached · room on 2/6 · F to follow · pulling …")
        for w in 0...120 { #expect(DisplayWidth.of(hint.render(width: w)) <= w) }
    }

    @Test func detachKeepsTheRoomName() {
        var s = line(mode: .detached(viewPage: 3), page: 3, roomPage: 3, by: nil, message: "p: pull the room here")
        s.me = "ann"
        s.control = true
        #expect(s.render(width: 80).hasPrefix("guide · page 3/6"), "\(s.render(width: 80))")
    }

    @Test func serverTextIsSanitized() {
        let s = StatusLine(room: "r\u{1B}]0;x\u{07}", page: 1, pageCount: 1, mode: .following, roomPage: 1,
                           connection: .connected, by: "a\u{1B}[2Jb", message: "bad\u{07}")
        #expect(s.render(width: 80) == "r · page 1/1 ● · following · by ab · bad^G")
    }
}
