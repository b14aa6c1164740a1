import PageSyncCore
import Testing
import PageSyncPager

/// The model reading a long page in pieces, scrolling chopped lines sideways, and keeping the
/// server's farewell on the status line.
@Suite struct LongPageModelTests {
    /// A page of `count` lines "line <i>" cut into pieces of at most `maxText` bytes, as the server cuts them.
    struct ServedPage {
        let lines: [String]
        let maxText: Int
        /// Where each line starts, and the page's size last.
        let starts: [Int]
        var bytes: Int { starts.last ?? 0 }
        init(count: Int, maxText: Int) {
            lines = (1...count).map { "line \($0)" }
            self.maxText = maxText
            var s = [0]
            for line in lines { s.append(s.last! + line.utf8.count + 1) }
            starts = s
        }

        /// The reply to `TEXT 1 FROM <from>` (`from` is a line start).
        func reply(from: Int) -> [String] {
            var i = starts.partitioningIndex { $0 >= from }
            var out: [String] = []
            while i < lines.count, starts[i + 1] - from <= maxText {
                out.append(lines[i])
                i += 1
            }
            let next = starts[i]
            return ["OK TEXT page=1 pages=1 doc=d1 bytes=\(bytes) lines=\(out.count) truncated=\(next < bytes ? "yes" : "no") from=\(from) next=\(next) split=no"]
                + out + ["."]
        }

        /// The reply to a plain `TEXT 1`: the first `maxText` bytes, cut anywhere.
        var plainReply: [String] {
            ["OK TEXT page=1 pages=1 doc=d1 bytes=\(bytes) lines=3 truncated=yes", "line 1", "line 2", "li", "."]
        }
    }

    /// Answers every `TEXT 1 FROM n` the model has asked for, until it asks for nothing more.
    func serve(_ h: inout Harness, _ page: ServedPage, limit: Int = 1000) {
        var rounds = 0
        while let first = h.unanswered.first, first.hasPrefix("TEXT 1 FROM "), rounds < limit {
            rounds += 1
            h.server(page.reply(from: Int(first.dropFirst(12))!))
        }
    }

    func longPage(_ page: ServedPage, rows: Int = 10) -> Harness {
        var h = Harness(hello: hello(pages: 1), text: nil, options: PagerOptions(size: TerminalSize(columns: 120, rows: rows)))
        h.server(page.plainReply)
        #expect(h.sent().last == "TEXT 1 FROM 0")
        return h
    }

    @Test func aPageLongerThanOneReplyIsReadInPiecesAsTheReaderScrolls() {
        let page = ServedPage(count: 5000, maxText: 2000)
        var h = longPage(page)
        serve(&h, page)
        let screen = h.model.screen()
        #expect(screen.first == "line 1")
        #expect(screen.last?.contains("lines 1-9/? ") == true)
        #expect(screen.last?.contains("more↓") == true)
        // Scrolling near the end of what is held asks for the next piece, and lines go on.
        for _ in 0..<40 { h.keys(.char(" ")) ; serve(&h, page) }
        let later = h.model.screen()
        #expect(later.first == "line 361")
        #expect(later.last?.contains("lines 361-369/?") == true)
        #expect(h.model.message == nil)
    }

    @Test func searchAndFilterWorkOnTheLinesHeld() {
        let page = ServedPage(count: 5000, maxText: 2000)
        var h = longPage(page)
        serve(&h, page)
        h.type("/line 5$")
        h.keys(.enter)
        #expect(h.model.message == "/line 5$: line 5")
        #expect(h.model.scrollOffset == 4)
        h.type("/line 4000$")
        h.keys(.enter)
        #expect(h.model.message == "pattern not found: line 4000$")  // not held yet, and the only page
        h.type("&7$")
        h.keys(.enter)
        serve(&h, page)
        let shown = h.model.screen().dropLast()
        #expect(shown.first == "line 7")
        #expect(shown.allSatisfy { $0.hasSuffix("7") || $0 == "~" })
        h.type("&")
        h.keys(.enter)
        #expect(h.model.message == "filter off: every line shows")
    }

    @Test func endReadsToTheLastLineAndKnowsTheCountThenStartGoesBack() {
        let page = ServedPage(count: 20_000, maxText: 20_000)
        var h = longPage(page)
        serve(&h, page)
        h.keys(.char(">"))
        #expect(h.model.message == "reading to the end of the page…")
        serve(&h, page)
        let end = h.model.screen()
        #expect(end[8] == "line 20000")
        #expect(end.last?.contains("lines 19992-20000/20000 100% end") == true)
        h.keys(.char("b"))
        serve(&h, page)
        #expect(h.model.screen().first == "line 19983")
        h.keys(.char("<"))
        serve(&h, page)
        #expect(h.model.screen().first == "line 1")
        #expect(h.model.screen().last?.contains("lines 1-9/20000") == true)
        // Space on the last screen of a long page turns the room only at the real end.
        h.keys(.char(">"))
        serve(&h, page)
        #expect(h.model.screen()[8] == "line 20000")
    }

    @Test func memoryStaysWithinTheBudget() {
        let page = ServedPage(count: 400_000, maxText: 1 << 20)
        var h = longPage(page)
        serve(&h, page)
        h.keys(.char(">"))
        serve(&h, page)
        #expect(h.model.screen()[8] == "line 400000")
        let held = h.model.longPage?.window.heldBytes ?? .max
        #expect(held <= PageWindow.byteBudget)
    }

    @Test func aRefusedPieceIsSaidAndTheScreenStays() {
        let page = ServedPage(count: 5000, maxText: 2000)
        var h = longPage(page)
        serve(&h, page)
        h.keys(.char(">"))
        h.server("ERR 507 could not read the document")  // the piece after the first is refused
        #expect(h.model.message == "page 1 is cut here: could not read the document")
        #expect(h.model.screen()[0].hasPrefix("line "))  // what was read stays
        h.keys(.char("G"))
        h.keys(.char(" "))
        #expect(h.model.message == "page 1 is cut here: could not read the document")
        #expect(h.model.screen().last?.contains("more↓") == true)
        #expect(!h.sent().contains { !$0.hasPrefix("TEXT") })  // never turns the room from a cut page
    }

    @Test func choppedLinesScrollSideways() {
        let wide = String(repeating: "abcdefghij", count: 10)
        var h = Harness(text: ["short", wide], options: PagerOptions(size: TerminalSize(columns: 20, rows: 5)))
        h.keys(.right)
        #expect(h.model.message == "long lines wrap here: w chops them")
        h.keys(.char("w"))
        #expect(h.model.screen()[0] == "short")
        #expect(h.model.screen()[1] == "abcdefghijabcdefghi>")
        h.keys(.right)
        #expect(h.model.sidewaysShift == ReaderKeys.sidewaysStep)
        #expect(h.model.screen()[0] == "<")
        #expect(h.model.screen()[1] == "<ijabcdefghijabcdef>")
        h.keys(.left, .left)
        #expect(h.model.sidewaysShift == 0)
        #expect(h.model.message == "already at the left edge")
        for _ in 0..<20 { h.keys(.right) }
        #expect(h.model.message == "nothing more to the right on this screen")
        #expect(h.model.screen()[1].hasSuffix("hij"))
        h.keys(.char("w"))
        #expect(h.model.sidewaysShift == 0)
    }

    @Test func theServersReasonOutlivesRefusedReconnects() {
        var h = Harness(hello: hello())
        h.server("BYE server shutting down")
        h.event(.disconnected(reason: "the server closed the connection"))
        h.event(.disconnected(reason: "connection refused"))
        #expect(h.model.message == "server: server shutting down")
        #expect(h.model.statusText().contains("server shutting down"))

        var full = Harness(hello: hello())
        full.event(.disconnected(reason: "the server closed the connection"))
        full.event(.connected)
        full.server("ERR 503 server full")
        full.event(.disconnected(reason: "the server closed the connection"))
        full.event(.disconnected(reason: "connection refused"))
        #expect(full.model.message == "server: server full")
        full.event(.connected)
        full.server(hello())
        #expect(full.model.message == nil)
    }
}
