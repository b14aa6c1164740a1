import Testing
import PageSyncCore

private func room(page p: Int = 2, version: UInt64 = 5, token: Bool = false, line: Int = 1, mark: LineRange? = nil) -> Room {
    Room(name: "walk", policy: RoomPolicy(wraps: false, requiresToken: token),
         state: RoomState(page: PageNumber(p)!, pageCount: 6, version: version, by: nil, doc: "d1", line: line, mark: mark))
}

private func range(_ a: Int, _ b: Int) -> LineRange { LineRange(first: a, last: b)! }

@Suite("The room's line and mark")
struct RoomFocusTests {
    @Test("LINE moves the top line, bumps the version and names who did it; the same line changes nothing")
    func setLine() {
        var r = room()
        let r1 = r.setLine(40, lineCount: 50, ifVersion: nil, by: "ann", hasControl: false)
        #expect(r1 == .success(.moved))
        #expect(r.state.line == 40 && r.state.version == 6 && r.state.by == "ann" && r.state.page == PageNumber(2)!)
        let r2 = r.setLine(40, lineCount: 50, ifVersion: nil, by: "bob", hasControl: false)
        #expect(r2 == .success(.unchanged))
        #expect(r.state.version == 6 && r.state.by == "ann")
        let r3 = r.setLine(50, lineCount: 50, ifVersion: 6, by: "bob", hasControl: false)
        #expect(r3 == .success(.moved), "the last line is fine")
        #expect(r.state.line == 50 && r.state.version == 7)
    }

    @Test("a line past the page's end, a stale IF, or no control in a presenter room: refused, nothing changes")
    func lineRefusals() {
        var r = room(line: 3)
        let before = r.state
        let r4 = r.setLine(51, lineCount: 50, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r4 == .failure(.noSuchLine(51, lines: 50)))
        let r5 = r.setLine(2, lineCount: 0, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r5 == .failure(.noSuchLine(2, lines: 1)),
                "an empty page has line 1 only")
        let r6 = r.setLine(0, lineCount: 50, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r6 == .failure(.noSuchLine(0, lines: 50)))
        let r7 = r.setLine(4, lineCount: 50, ifVersion: 4, by: "ann", hasControl: true)
        #expect(r7 == .failure(.conflict(expected: 4)))
        var presenter = room(token: true)
        let r8 = presenter.setLine(4, lineCount: 50, ifVersion: 4, by: "ann", hasControl: false)
        #expect(r8 == .failure(.forbidden),
                "forbidden is checked before IF, as for page turns")
        #expect(r.state == before)
        let r9 = presenter.setLine(4, lineCount: 50, ifVersion: 5, by: "ann", hasControl: true)
        #expect(r9 == .success(.moved))
    }

    @Test("MARK highlights a range, MARK - clears it; a range past the end is refused")
    func setMark() {
        var r = room()
        let r10 = r.setMark(range(3, 9), lineCount: 20, ifVersion: nil, by: "ann", hasControl: false)
        #expect(r10 == .success(.moved))
        #expect(r.state.mark == range(3, 9) && r.state.version == 6 && r.state.line == 1)
        let r11 = r.setMark(range(3, 9), lineCount: 20, ifVersion: nil, by: "ann", hasControl: false)
        #expect(r11 == .success(.unchanged))
        let r12 = r.setMark(range(19, 21), lineCount: 20, ifVersion: nil, by: "ann", hasControl: false)
        #expect(r12 == .failure(.noSuchLine(21, lines: 20)))
        let r13 = r.setMark(range(7, 7), lineCount: 20, ifVersion: 6, by: "bob", hasControl: false)
        #expect(r13 == .success(.moved))
        #expect(r.state.mark == range(7, 7) && r.state.by == "bob")
        let r14 = r.setMark(nil, lineCount: 20, ifVersion: nil, by: "bob", hasControl: false)
        #expect(r14 == .success(.moved))
        #expect(r.state.mark == nil && r.state.version == 8)
        let r15 = r.setMark(nil, lineCount: 20, ifVersion: nil, by: "bob", hasControl: false)
        #expect(r15 == .success(.unchanged))
    }

    @Test("a page turn resets the line and the mark; staying on the page keeps them")
    func pageTurnResets() {
        var r = room(line: 12, mark: range(12, 14))
        let r16 = r.navigate(.goto(PageNumber(2)!), ifVersion: nil, by: "ann", hasControl: true)
        #expect(r16 == .success(.unchanged))
        #expect(r.state.line == 12 && r.state.mark == range(12, 14))
        let r17 = r.navigate(.next, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r17 == .success(.moved))
        #expect(r.state.line == 1 && r.state.mark == nil && r.state.page == PageNumber(3)!)
    }

    @Test("a reload that shortens the page clamps the line and the mark; one that moves the page resets them")
    func reloadClamps() {
        var r = room(line: 40, mark: range(35, 45))
        let r18 = r.documentChanged(pageCount: 6, doc: "d1", lineCount: 50)
        #expect(r18 == false, "nothing changed")
        let r19 = r.documentChanged(pageCount: 6, doc: "d2", lineCount: 38)
        #expect(r19)
        #expect(r.state.line == 38 && r.state.mark == range(35, 38) && r.state.version == 6)
        let r20 = r.documentChanged(pageCount: 6, doc: "d3", lineCount: 20)
        #expect(r20)
        #expect(r.state.line == 20 && r.state.mark == nil, "a mark wholly past the end goes")
        let r21 = r.documentChanged(pageCount: 6, doc: "d4", lineCount: 0)
        #expect(r21)
        #expect(r.state.line == 1, "an emptied page keeps line 1")
        var moved = room(page: 5, line: 9, mark: range(1, 2))
        let r22 = moved.documentChanged(pageCount: 3, doc: "d2")
        #expect(r22)
        #expect(moved.state.page == PageNumber(3)! && moved.state.line == 1 && moved.state.mark == nil)
        var unknown = room(line: 9, mark: range(1, 2))
        let r23 = unknown.documentChanged(pageCount: 6, doc: "d2")
        #expect(r23)
        #expect(unknown.state.line == 9 && unknown.state.mark == range(1, 2), "without a line count they stay")
    }

    @Test("at the last version a focus change is refused, never reusing a version")
    func versionExhausted() {
        var r = room(version: .max)
        let r24 = r.setLine(2, lineCount: 5, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r24 == .failure(.versionExhausted))
        let r25 = r.setMark(range(1, 1), lineCount: 5, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r25 == .failure(.versionExhausted))
        let r26 = r.setLine(1, lineCount: 5, ifVersion: nil, by: "ann", hasControl: true)
        #expect(r26 == .success(.unchanged))
    }

    @Test("a range goes up from line 1; it is written a-b, or a for one line")
    func ranges() {
        #expect(LineRange(first: 0, last: 3) == nil && LineRange(first: 9, last: 3) == nil)
        #expect(range(3, 9).text == "3-9" && range(4, 4).text == "4")
        #expect(range(3, 9).clamped(toLines: 5) == range(3, 5) && range(6, 9).clamped(toLines: 5) == nil)
    }
}
