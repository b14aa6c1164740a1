/// A room's name, state and wrapping policy: what the server needs to encode a line
/// about a room.
public struct RoomSnapshot: Equatable, Sendable {
    /// The room's name.
    public var name: String
    /// The room's state.
    public var state: RoomState
    /// Whether the room wraps around at its ends.
    public var wraps: Bool
    /// The document's name as `HELLO` and `OK JOIN` give it (`file=`, see
    /// ``DocumentSource/wireFileName``); nil leaves the field out.
    public var file: String?
    /// The document's title as `title=` carries it (percent-encoded, see ``WireText``); nil
    /// leaves the field out.
    public var title: String?

    /// Creates a snapshot.
    public init(name: String, state: RoomState, wraps: Bool, file: String? = nil, title: String? = nil) {
        self.name = name
        self.state = state
        self.wraps = wraps
        self.file = file
        self.title = title
    }
}

/// Everything the server writes, encoded once as LF-terminated UTF-8 bytes, exactly in
/// the formats of PROTOCOL.md. Optional `by` encodes as `-`; booleans as `yes`/`no`.
public enum Wire {
    /// The protocol identifier sent in `HELLO`.
    public static let protocolName = "pagesync/1"

    /// `HELLO pagesync/1 room= page= pages= version= by= doc= epoch= line= mark= wrap= control= name= file= [title=] [idle=]`;
    /// `idle=` when the server closes connections silent for `idleSeconds` (more than 0).
    public static func hello(_ room: RoomSnapshot, control: Bool, name: String, idleSeconds: Int = 0) -> [UInt8] {
        line("HELLO \(protocolName) \(greetingFields(room, control: control, name: name))"
             + (idleSeconds > 0 ? " idle=\(idleSeconds)" : ""))
    }

    /// `OK JOIN room= page= pages= version= by= doc= epoch= line= mark= wrap= control= name= file= [title=]` (the `HELLO` fields).
    public static func joined(_ room: RoomSnapshot, control: Bool, name: String) -> [UInt8] {
        line("OK JOIN \(greetingFields(room, control: control, name: name))")
    }

    /// `PAGE room= page= pages= version= by= doc= epoch= line= mark=`: the room's whole state.
    package static func event(_ room: RoomSnapshot) -> ByteLine {
        event(room: room.name, room.state)
    }

    /// ``event(_:)`` from the room's name and state alone (no snapshot to assemble).
    package static func event(room name: String, _ state: RoomState) -> ByteLine {
        WireLineBuilder.byteLine(capacity: 11 + name.utf8.count + stateFieldsCapacity(state)) { out in
            out.ascii("PAGE room=")
            out.text(name)
            out.ascii(" ")
            appendStateFields(state, to: &out)
        }
    }

    /// `OK page= pages= version= line= mark=`: the reply to a navigation, `LINE` or `MARK`.
    package static func navigated(_ state: RoomState) -> ByteLine {
        navigated(NavigatedReply(state))
    }

    /// ``navigated(_:)`` from its numbers alone (``NavigatedReply``'s bytes), so that no
    /// state is copied (a room's `state` read out of a class is copied, its strings retained
    /// and released).
    package static func navigated(_ reply: NavigatedReply) -> ByteLine {
        ByteLine.write(capacity: NavigatedReply.capacity) { reply.write(to: &$0) }
    }

    /// `OK room= page= pages= version= by= doc= epoch= line= mark= wrap= control= clients=
    /// following= browsing= hands= [title=]`: the reply to `STATUS`.
    public static func status(_ room: RoomSnapshot, control: Bool, clients: Int, audience: AudienceCounts = AudienceCounts()) -> [UInt8] {
        line("OK room=\(room.name) \(stateFields(room.state)) wrap=\(yesNo(room.wraps)) control=\(yesNo(control)) clients=\(clients)"
             + " following=\(audience.following) browsing=\(audience.browsing) hands=\(audience.hands)"
             + (room.title.map { " title=\($0)" } ?? ""))
    }

    /// `AUDIENCE room= following= browsing= hands= [first=<name>]`: where a room's members are,
    /// for its members with control; `first` is the member whose hand has been up longest.
    public static func audience(room: String, _ counts: AudienceCounts, firstHand: String?) -> [UInt8] {
        line("AUDIENCE room=\(room) following=\(counts.following) browsing=\(counts.browsing) hands=\(counts.hands)"
             + (firstHand.map { " first=\($0)" } ?? ""))
    }

    /// `OK VIEW follow` or `OK VIEW browse:<page>`.
    public static func viewed(_ view: MemberView) -> [UInt8] { line("OK VIEW \(view.text)") }

    /// `OK HAND up`, `OK HAND down`; `OK HAND DOWN <n>` for hands lowered by one with control.
    public static func hand(up: Bool) -> [UInt8] { line("OK HAND \(up ? "up" : "down")") }

    /// `HAND down by=<name>`: an event to a member whose hand someone with control lowered.
    public static func handLowered(by name: String) -> [UInt8] { line("HAND down by=\(name)") }

    /// `OK HAND DOWN <n>`: `n` hands lowered.
    public static func handsLowered(_ n: Int) -> [UInt8] { line("OK HAND DOWN \(n)") }

    /// `ERR <code> <message>`. Control characters in the message (CR and LF among them)
    /// become spaces, so this is always one line and never drives a terminal.
    public static func error(_ e: ProtocolError) -> [UInt8] {
        line("ERR \(e.code.rawValue) \(e.message)")
    }

    /// The `ERR` line for a refused navigation, with PROTOCOL.md's messages:
    /// 403 `this room needs a control token; send AUTH <token>`,
    /// 404 `no page 9: this document has 6 pages`,
    /// 409 `version is 8, not 7`, 416 `already on the last page` / `already on the first page` /
    /// `no line 40: page 3 has 25 lines`
    /// and 500 ``versionExhaustedMessage``; all but 403 and 404 followed by `page= pages= version= by= doc= epoch= line= mark=`.
    public static func error(_ e: NavigationError, room: RoomSnapshot) -> [UInt8] {
        switch e {
        case .forbidden:
            return line("ERR 403 this room needs a control token; send AUTH <token>")
        case .noSuchPage(let page):
            let count = room.state.pageCount
            return line("ERR 404 no page \(page): this document has \(count) page\(count == 1 ? "" : "s")")
        case .conflict(let expected):
            return line("ERR 409 version is \(room.state.version), not \(expected) \(stateFields(room.state))")
        case .pastEnd(let edge):
            let which = edge == .first ? "first" : "last"
            return line("ERR 416 already on the \(which) page \(stateFields(room.state))")
        case .versionExhausted:
            return line("ERR 500 \(versionExhaustedMessage) \(stateFields(room.state))")
        case .noSuchLine(let n, let lines):
            return line("ERR 416 no line \(n): page \(room.state.page) has \(lines) line\(lines == 1 ? "" : "s") \(stateFields(room.state))")
        }
    }

    /// The text of the 500 error for a change refused at the largest version.
    public static let versionExhaustedMessage =
        "version limit reached: this room cannot change any more without reusing a version; reset the state directory (a new epoch)"

    /// `OK <text>`, or `OK` when `text` is empty.
    public static func ok(_ text: String) -> [UInt8] {
        line(text.isEmpty ? "OK" : "OK \(text)")
    }

    /// `OK NAME <name>`: the reply to `NAME`.
    public static func named(_ name: String) -> [UInt8] { ok("NAME \(name)") }

    /// `OK AUTH control=yes`: the reply to an `AUTH` that granted control.
    public static func authorized() -> [UInt8] { ok("AUTH control=yes") }

    /// `OK PONG [<text>]`: the reply to `PING [<text>]`.
    public static func pong(_ text: String?) -> [UInt8] { ok(text.map { "PONG \($0)" } ?? "PONG") }

    /// `OK BYE`: the reply to `QUIT`, after which the server closes the connection.
    public static func quitting() -> [UInt8] { ok("BYE") }

    /// The reply to `HELP`: `OK HELP`, then ``helpLines``, then `.`.
    public static func help() -> [UInt8] { multiline(header: "OK HELP", lines: helpLines.map { Substring($0) }) }

    /// `"<header>\n"`, then every line dot-stuffed (a line starting with `.` gets one more
    /// `.` in front), then `".\n"`. A line holding LFs is sent as several lines; any
    /// other control character becomes a space.
    public static func multiline(header: String, lines: some Sequence<Substring>) -> [UInt8] {
        var out = line(header)
        for l in lines {
            // Printable ASCII (the usual line of ROOMS, WHO, HELP, INFO) has no LF and no
            // control character to replace: its bytes are copied as they are, without the
            // per-Character split and scan below: 2,000 pipelined `INFO` of a daemon with 200
            // rooms took 0.44 s more than as many `PING` through them, 0.20 s this way.
            let copied = l.utf8.withContiguousStorageIfAvailable { bytes in
                guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return false }
                appendStuffed(bytes, to: &out)
                return true
            }
            if copied == true { continue }
            for part in l.split(separator: "\n", omittingEmptySubsequences: false) {
                appendStuffed(ControlCharacters.replacingControls(String(part)).utf8, to: &out)
            }
        }
        out.append(contentsOf: ".\n".utf8)
        return out
    }

    /// One line per command, in PROTOCOL.md's command table order: usage padded to 31
    /// columns, then what it does.
    public static let helpLines: [String] = [
        ("NEXT [IF <version>]", "turn to the next page"),
        ("PREV [IF <version>]", "turn to the previous page"),
        ("FIRST [IF <version>]", "turn to page 1"),
        ("LAST [IF <version>]", "turn to the last page"),
        ("GOTO <n> [IF <version>]", "turn to page n"),
        ("LINE <n> [IF <version>]", "show line n of the page at the top of the room's screens"),
        ("MARK <a>[-<b>] [IF <version>]", "highlight lines a to b of the page; MARK - clears it"),
        ("STATUS", "the room's state"),
        ("TEXT [<n>] [FROM <offset>]", "the text of page n (default: the room's current page), from a byte offset"),
        ("NOTES [<n>]", "the speaker notes of page n (with control; default: the room's page)"),
        ("ROOMS", "every room on this server"),
        ("JOIN <room>", "move to another room"),
        ("NAME <name>", "set the name others see"),
        ("WHO [<offset>]", "who is in your room, a page at a time"),
        ("VIEW FOLLOW | BROWSE <n>", "say what your screen shows: the room's page, or page n"),
        ("HAND UP | DOWN [<name>|ALL]", "raise or lower your hand (others' with control)"),
        ("AUTH <token>", "ask for control of a presenter room"),
        ("PING [<text>]", "check the connection"),
        ("HELP", "list the commands"),
        ("INFO [<section>]", "the server's state and counters: server, clients, rooms, engine, stats"),
        ("QUIT", "close the connection"),
    ].map { usage, what in
        usage + String(repeating: " ", count: max(1, 31 - usage.count)) + what
    }

    /// The reply to `TEXT`:
    /// `OK TEXT page=<n> pages=<count> doc=<id> bytes=<pageByteCount> lines=<l> truncated=<yes|no>`,
    /// then `bytes` split into lines (LF ends a line, a CR right before it is dropped, a last
    /// line without LF counts), invalid UTF-8 replaced by U+FFFD, dot-stuffed, then `.`.
    /// With `piece` (a reply to `TEXT <n> FROM <offset>`), the header also carries
    /// `from=<offset> next=<offset> split=<yes|no>`, and `truncated=yes` means more follows from `next`.
    public static func text(page: PageNumber, pageCount: Int, doc: String, bytes: [UInt8], pageByteCount: Int, truncated: Bool,
                            piece: TextPiece? = nil) -> [UInt8] {
        var encoder = TextReplyEncoder(page: page, pageCount: pageCount, doc: doc, bytes: bytes, pageByteCount: pageByteCount,
                                       truncated: truncated, piece: piece)
        var out: [UInt8] = []
        while let chunk = encoder.nextChunk(atLeast: Int.max) { out += chunk }
        return out
    }

    /// The reply to `NOTES` from a member without control: `ERR 403`.
    public static let notesForbidden = line("ERR 403 notes are for those with control; send AUTH <token>")

    /// `BYE <reason>`.
    public static func bye(_ reason: String) -> [UInt8] {
        line(reason.isEmpty ? "BYE" : "BYE \(reason)")
    }

    // MARK: - Helpers

    static func yesNo(_ b: Bool) -> String { b ? "yes" : "no" }

    /// `page= pages= version= by= doc= epoch= line= mark=`, for lines built as text (through the same
    /// encoder as the `PAGE` line, so control characters in `by` and `doc` are already spaces).
    package static func stateFields(_ s: RoomState) -> String {
        String(decoding: WireLineBuilder.line(capacity: stateFieldsCapacity(s)) { appendStateFields(s, to: &$0) }.dropLast(),
               as: UTF8.self)
    }

    /// The most bytes ``appendPosition(_:to:)`` writes.
    package static let positionCapacity = 5 + 7 + 9 + 3 * WireLineBuilder.decimalCapacity

    /// `page= pages= version=`.
    static func appendPosition(_ s: RoomState, to out: inout WireLineBuilder) {
        appendPosition(page: s.page, pageCount: s.pageCount, version: s.version, to: &out)
    }

    /// ``appendPosition(_:to:)`` from the three numbers.
    @inline(__always)
    static func appendPosition(page: PageNumber, pageCount: Int, version: UInt64, to out: inout WireLineBuilder) {
        out.ascii("page=")
        out.decimal(page.number)
        out.ascii(" pages=")
        out.decimal(pageCount)
        out.ascii(" version=")
        out.decimal(version)
    }

    /// The most bytes ``appendStateFields(_:to:)`` writes for `s`.
    package static func stateFieldsCapacity(_ s: RoomState) -> Int {
        positionCapacity + tailFieldsCapacity(s)
    }

    /// `page= pages= version= by= doc= epoch= line= mark=`.
    static func appendStateFields(_ s: RoomState, to out: inout WireLineBuilder) {
        appendPosition(s, to: &out)
        appendTailFields(s, to: &out)
        appendFocus(line: s.line, mark: s.mark, to: &out)
    }

    /// The most bytes ``appendTailFields(_:to:)`` writes for `s`, the focus included.
    static func tailFieldsCapacity(_ s: RoomState) -> Int {
        4 + (s.by?.utf8.count ?? 1) + 5 + s.doc.utf8.count + 7 + 16 + focusCapacity
    }

    /// The most bytes ``appendFocus(line:mark:to:)`` writes.
    package static let focusCapacity = 6 + 6 + 1 + 3 * WireLineBuilder.decimalCapacity

    /// ` line=<n> mark=<a>-<b>` (`mark=<a>` for one line, `mark=-` for none): the room's focus
    /// within its page, the last of the state fields.
    @inline(__always)
    static func appendFocus(line: Int, mark: LineRange?, to out: inout WireLineBuilder) {
        if line == 1 && mark == nil {  // after every page turn: one copy of fixed bytes
            out.ascii(" line=1 mark=-")
            return
        }
        out.ascii(" line=")
        out.decimal(line)
        out.ascii(" mark=")
        if let mark {
            out.decimal(mark.first)
            if mark.last != mark.first {
                out.ascii("-")
                out.decimal(mark.last)
            }
        } else {
            out.ascii("-")
        }
    }

    /// ` by= doc= epoch=`: the state fields after the position.
    static func appendTailFields(_ s: RoomState, to out: inout WireLineBuilder) {
        out.ascii(" by=")
        if let by = s.by { out.text(by) } else { out.ascii("-") }
        out.ascii(" doc=")
        out.text(s.doc)
        out.ascii(" epoch=")
        out.hex16(s.epoch.value)
    }

    static func greetingFields(_ room: RoomSnapshot, control: Bool, name: String) -> String {
        "room=\(room.name) \(stateFields(room.state)) wrap=\(yesNo(room.wraps)) control=\(yesNo(control)) name=\(name)"
            + (room.file.map { " file=\($0)" } ?? "") + (room.title.map { " title=\($0)" } ?? "")
    }

    /// The text's UTF-8 with every control character (C0 including CR and LF, DEL, C1)
    /// replaced by a space, plus LF: a reply line never carries a control character.
    static func line(_ text: String) -> [UInt8] {
        WireLineBuilder.line(capacity: text.utf8.count) { $0.text(text) }
    }

    static func appendStuffed(_ content: some Collection<UInt8>, to out: inout [UInt8]) {
        if content.first == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
        out.append(contentsOf: content)
        out.append(0x0A)
    }
}
