import Testing
import PageSyncCore

private func focused(line: Int, mark: LineRange?, by: String? = "ann") -> RoomState {
    RoomState(page: PageNumber(3)!, pageCount: 6, version: 12, by: by, doc: "5f1c3a2b", line: line, mark: mark)
}

private func str(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("line= and mark= on every line that carries the room's state")
struct FocusWireTests {
    @Test("PAGE, HELLO, OK JOIN, STATUS and the OK of a change carry line= and mark= after epoch=")
    func everyStateLineCarriesTheFocus() {
        let room = RoomSnapshot(name: "walk", state: focused(line: 212, mark: LineRange(first: 214, last: 220)), wraps: false)
        let fields = "page=3 pages=6 version=12 by=ann doc=5f1c3a2b epoch=0000000000000000 line=212 mark=214-220"
        #expect(str(Wire.event(room).bytes) == "PAGE room=walk \(fields)\n")
        #expect(str(Wire.hello(room, control: true, name: "ann")) == "HELLO pagesync/1 room=walk \(fields) wrap=no control=yes name=ann\n")
        #expect(str(Wire.joined(room, control: false, name: "bob")) == "OK JOIN room=walk \(fields) wrap=no control=no name=bob\n")
        #expect(str(Wire.status(room, control: false, clients: 2)) == "OK room=walk \(fields) wrap=no control=no clients=2 following=0 browsing=0 hands=0\n")
        #expect(str(Wire.navigated(room.state).bytes) == "OK page=3 pages=6 version=12 line=212 mark=214-220\n")
        #expect(str(Wire.error(.noSuchLine(41, lines: 40), room: room)) == "ERR 416 no line 41: page 3 has 40 lines \(fields)\n")
    }

    @Test("a one-line mark is written mark=<a>, no mark mark=-")
    func markForms() {
        #expect(str(Wire.navigated(focused(line: 1, mark: LineRange(first: 7, last: 7))).bytes).hasSuffix(" line=1 mark=7\n"))
        #expect(str(Wire.navigated(focused(line: 9, mark: nil)).bytes).hasSuffix(" line=9 mark=-\n"))
    }

    @Test("the PAGE template writes the event line's bytes as the line and mark change under a fixed tail")
    func templateFollowsTheFocus() {
        var template = PageLineTemplate(room: "walk")
        var state = focused(line: 1, mark: nil)
        for step in 1...200 {
            state.version += 1
            state.line = (step * 37) % 500 + 1
            state.mark = step % 3 == 0 ? nil : LineRange(first: step, last: step + step % 5)
            #expect(template.line(state).bytes == Wire.event(room: "walk", state).bytes)
        }
        #expect(template.tailsEncoded == 1)
    }

    @Test("a client reads line= and mark= back; lines without them (older daemons) read as nil", arguments: [
        ("PAGE room=walk page=3 line=212 mark=214-220", 212, LineRange(first: 214, last: 220)),
        ("OK page=3 pages=6 version=2 line=1 mark=-", 1, LineRange?.none),
        ("PAGE room=walk page=3 line=5 mark=9", 5, LineRange(first: 9, last: 9)),
    ])
    func clientsReadTheFocus(line: String, top: Int, mark: LineRange?) {
        let parsed = WireLine(parsing: line)!
        #expect(parsed.line == top)
        #expect(parsed.mark == .some(mark))
    }

    @Test("missing or impossible focus fields read as nil", arguments: [
        "PAGE room=walk page=3", "PAGE line=0 mark=9-3", "PAGE line=x mark=3-", "PAGE line=-1 mark=-3", "PAGE mark=a-b",
    ])
    func badFocusReadsAsNil(line: String) {
        let parsed = WireLine(parsing: line)!
        #expect(parsed.line == nil)
        #expect(parsed.mark == nil)
    }

}
