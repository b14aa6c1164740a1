import Testing
import PageSyncPager

/// Pieces of a page of `lineCount` lines "l0".."l<n-1>" (3 bytes + LF each up to l9, and so on),
/// cut as the server cuts them: at most `maxText` bytes, whole lines.
struct FakePage {
    let lines: [String]
    let maxText: Int
    /// Where each line starts, and the page's size last.
    let starts: [Int]
    var bytes: Int { starts.last ?? 0 }

    init(lineCount: Int, maxText: Int) {
        lines = (0..<lineCount).map { "l\($0)" }
        self.maxText = maxText
        var s = [0]
        for line in lines { s.append(s.last! + line.utf8.count + 1) }
        starts = s
    }

    /// The piece from byte `from` (which must be a line start).
    func piece(from: Int) -> PagePiece {
        var i = starts.partitioningIndex { $0 >= from }
        var out: [String] = []
        while i < lines.count, starts[i + 1] - from <= maxText {
            out.append(lines[i])
            i += 1
        }
        return PagePiece(from: from, next: starts[i], split: false, lines: out)
    }
}

@Suite struct PageWindowTests {
    @Test func startsAtTheTopThenFetchesNearTheBottomEdge() {
        let page = FakePage(lineCount: 1000, maxText: 400)
        var w = PageWindow(pageBytes: page.bytes)
        #expect(w.nextRequest(top: 0, bottom: 0, screen: 10) == 0)
        w.markRequested(0)
        #expect(w.nextRequest(top: 0, bottom: 0, screen: 10) == nil)  // one at a time
        let p0 = page.piece(from: 0)
        let took1 = w.receive(p0, pageBytes: page.bytes)
        #expect(took1)
        #expect(w.requested == nil)
        #expect(w.atStart && !w.atEnd)
        #expect(w.lines() == p0.lines)
        // Far from the bottom edge: nothing. Within two screens of it: the next piece.
        #expect(w.nextRequest(top: 0, bottom: 9, screen: 10) == nil)
        #expect(w.nextRequest(top: 60, bottom: p0.lines.count - 21, screen: 10) == p0.next)
    }

    @Test func evictsTheFarEndBeyondTheBudgetAndFetchesBackByTheIndex() {
        let page = FakePage(lineCount: 1_000_000, maxText: 1 << 20)
        var w = PageWindow(pageBytes: page.bytes)
        var from = 0
        for _ in 0..<5 {
            let p = page.piece(from: from)
            let took2 = w.receive(p, pageBytes: page.bytes)
            #expect(took2)
            from = p.next
        }
        #expect(w.held.count == 3)  // 3 MiB budget of ~1 MiB pieces
        #expect(w.heldBytes <= PageWindow.byteBudget)
        #expect(w.index.count == 5)
        let firstHeld = w.held[0]
        #expect(firstHeld.from == w.index[2].from)
        #expect(w.firstLine == w.index[2].firstLine)
        #expect(w.lines().first == page.lines[w.firstLine])
        // Near the top edge: the piece before, by the offset the index remembers.
        #expect(w.nextRequest(top: 3, bottom: 12, screen: 10) == w.index[1].from)
        let took3 = w.receive(page.piece(from: w.index[1].from), pageBytes: page.bytes)
        #expect(took3)
        #expect(w.held.count == 3)
        #expect(w.held.first?.from == w.index[1].from)
        #expect(w.held.last?.next == w.index[3].next)  // the far end went
        #expect(w.lines().first == page.lines[w.index[1].firstLine])
    }

    @Test func goalEndSkipsKnownPiecesAndKnowsTheLineCountAtTheEnd() {
        let page = FakePage(lineCount: 1_000_000, maxText: 1 << 20)  // 8 pieces, more than the budget holds
        var w = PageWindow(pageBytes: page.bytes)
        let took4 = w.receive(page.piece(from: 0), pageBytes: page.bytes)
        #expect(took4)
        #expect(w.lineCount == nil)
        w.goal = .end
        var steps = 0
        while w.goal != nil, let offset = w.nextRequest(top: 0, bottom: 0, screen: 10) {
            w.markRequested(offset)
            let took5 = w.receive(page.piece(from: offset), pageBytes: page.bytes)
            #expect(took5)
            steps += 1
            #expect(steps < 100)
        }
        #expect(w.atEnd)
        #expect(w.goal == nil)
        #expect(w.lineCount == 1_000_000)
        #expect(w.lines().last == "l999999")
        #expect(w.firstLine + w.heldLineCount == 1_000_000)
        #expect(w.heldBytes <= PageWindow.byteBudget)
        // Back to the start: offset 0, not piece by piece.
        w.goal = .start
        #expect(w.nextRequest(top: 0, bottom: 0, screen: 10) == 0)
        let took6 = w.receive(page.piece(from: 0), pageBytes: page.bytes)
        #expect(took6)
        #expect(w.held.count == 1 && w.atStart && w.goal == nil)
        // Jumping to the end again skips straight to the known last piece.
        w.goal = .end
        #expect(w.nextRequest(top: 0, bottom: 0, screen: 10) == w.index.last?.from)
    }

    @Test func refusesOffsetsNobodyGaveAndOtherSizes() {
        let page = FakePage(lineCount: 100, maxText: 100)
        var w = PageWindow(pageBytes: page.bytes)
        let took7 = w.receive(PagePiece(from: 37, next: 80, split: false, lines: ["x"]), pageBytes: page.bytes)
        #expect(!took7)
        let took8 = w.receive(page.piece(from: 0), pageBytes: page.bytes + 1)
        #expect(!took8)
        #expect(w.held.isEmpty && w.index.isEmpty)
    }

    @Test func aSplitLineIsJoinedAndCountedOnce() {
        var w = PageWindow(pageBytes: 30)
        let took9 = w.receive(PagePiece(from: 0, next: 10, split: true, lines: ["ab", "cdefg"]), pageBytes: 30)
        #expect(took9)
        #expect(w.lines() == ["ab", "cdefg"])
        let took10 = w.receive(PagePiece(from: 10, next: 30, split: false, lines: ["hij", "klm"]), pageBytes: 30)
        #expect(took10)
        #expect(w.lines() == ["ab", "cdefghij", "klm"])
        #expect(w.heldLineCount == 3)
        #expect(w.lineCount == 3)
        #expect(w.index[1].firstLine == 1)
    }

    @Test func percentByBytesUntilTheCountIsKnown() {
        let page = FakePage(lineCount: 1000, maxText: 1000)
        var w = PageWindow(pageBytes: page.bytes)
        w.receive(page.piece(from: 0), pageBytes: page.bytes)
        let p = w.percent(throughLine: w.heldLineCount - 1)
        #expect(p == w.held[0].next * 100 / page.bytes)
        #expect(p < 100)
    }
}

extension Array where Element == Int {
    /// The first index whose element satisfies `belongs` (elements sorted so that those that do come last).
    func partitioningIndex(where belongs: (Int) -> Bool) -> Int {
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if belongs(self[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}
