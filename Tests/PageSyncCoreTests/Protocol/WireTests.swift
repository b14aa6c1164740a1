import Testing
import PageSyncCore

private func str(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func state(page: Int = 1, count: Int = 6, version: UInt64 = 0, by: String? = nil, doc: String = "5f1c3a2b") -> RoomState {
    RoomState(page: PageNumber(page)!, pageCount: count, version: version, by: by, doc: doc)
}

private func guide(page: Int = 1, version: UInt64 = 0, by: String? = nil) -> RoomSnapshot {
    RoomSnapshot(name: "guide", state: state(page: page, version: version, by: by), wraps: false)
}

@Suite struct WireEncodingTests {
    @Test func hello() {
        #expect(str(Wire.hello(guide(), control: true, name: "guest-1"))
            == "HELLO pagesync/1 room=guide page=1 pages=6 version=0 by=- doc=5f1c3a2b epoch=0000000000000000 line=1 mark=- wrap=no control=yes name=guest-1\n")
        let slides = RoomSnapshot(name: "slides", state: state(page: 3, count: 12, version: 9, by: "ann", doc: "9a0e11c4"), wraps: true)
        #expect(str(Wire.hello(slides, control: false, name: "bob"))
            == "HELLO pagesync/1 room=slides page=3 pages=12 version=9 by=ann doc=9a0e11c4 epoch=0000000000000000 line=1 mark=- wrap=yes control=no name=bob\n")
    }

    @Test func helloSaysTheIdleTimeoutOnlyWhenThereIsOne() {
        #expect(str(Wire.hello(guide(), control: true, name: "guest-1", idleSeconds: 300)).hasSuffix(" name=guest-1 idle=300\n"))
        #expect(!str(Wire.hello(guide(), control: true, name: "guest-1", idleSeconds: 0)).contains("idle="))
        var titled = guide()
        titled.title = "My%20talk"
        #expect(str(Wire.hello(titled, control: true, name: "ann", idleSeconds: 5)).hasSuffix(" title=My%20talk idle=5\n"))
    }

    @Test func greetingsNameTheFile() {
        var slides = RoomSnapshot(name: "slides", state: state(page: 1, count: 12, version: 0, doc: "9a0e11c4"), wraps: true,
                                  file: DocumentSource.file("/srv/talks/my slides.md").wireFileName)
        #expect(str(Wire.joined(slides, control: false, name: "ann"))
            == "OK JOIN room=slides page=1 pages=12 version=0 by=- doc=9a0e11c4 epoch=0000000000000000 line=1 mark=- wrap=yes control=no name=ann file=my%20slides.md\n")
        slides.file = DocumentSource.builtinGuide.wireFileName
        #expect(str(Wire.hello(slides, control: true, name: "bob")).hasSuffix(" name=bob file=-\n"))
        // The PAGE event does not carry it.
        #expect(!str(Wire.event(slides).bytes).contains("file="))
    }

    @Test func aTitleFollowsTheFileInGreetingsStatusAndRooms() {
        var slides = RoomSnapshot(name: "slides", state: state(page: 1, count: 12, version: 0, doc: "9a0e11c4"), wraps: true,
                                  file: "talk.md", title: WireText.percentEncoded("My talk: part 1"))
        #expect(str(Wire.hello(slides, control: true, name: "bob")).hasSuffix(" name=bob file=talk.md title=My%20talk%3A%20part%201\n"))
        #expect(str(Wire.joined(slides, control: true, name: "bob")).hasSuffix(" file=talk.md title=My%20talk%3A%20part%201\n"))
        #expect(str(Wire.status(slides, control: true, clients: 2)).hasSuffix(" clients=2 following=0 browsing=0 hands=0 title=My%20talk%3A%20part%201\n"))
        #expect(!str(Wire.event(slides).bytes).contains("title="))
        let listing = RoomListing(name: "slides", state: slides.state, clients: 2, requiresToken: false, wraps: true, title: slides.title)
        #expect(str(Wire.rooms([listing])).contains(" wrap=yes title=My%20talk%3A%20part%201\n"))
        slides.title = nil
        #expect(!str(Wire.hello(slides, control: true, name: "bob")).contains("title="))
        #expect(WireText.percentDecoded("My%20talk%3a%20%C3%BC%zz%4") == "My talk: ü%zz%4")
        #expect(WireText.percentDecoded(WireText.percentEncoded("a b\tc/é~")) == "a b\tc/é~")
        #expect(WireText.percentDecoded("%FF") == "\u{FFFD}")
    }

    @Test func wireFileNames() {
        #expect(DocumentSource.file("/a/notes.txt").wireFileName == "notes.txt")
        #expect(DocumentSource.file("relative/Deck_2+v~1,a@b-c.MD").wireFileName == "Deck_2+v~1,a@b-c.MD")
        #expect(DocumentSource.file("/a/x=y\tz%.md").wireFileName == "x%3Dy%09z%25.md")
        #expect(DocumentSource.file("/a/é.md").wireFileName == "%C3%A9.md")
        #expect(DocumentSource.file("/").wireFileName == "-")
    }

    @Test func joined() {
        let slides = RoomSnapshot(name: "slides", state: state(page: 1, count: 12, version: 0, doc: "9a0e11c4"), wraps: true)
        #expect(str(Wire.joined(slides, control: false, name: "ann"))
            == "OK JOIN room=slides page=1 pages=12 version=0 by=- doc=9a0e11c4 epoch=0000000000000000 line=1 mark=- wrap=yes control=no name=ann\n")
    }

    @Test func event() {
        #expect(str(Wire.event(guide(page: 2, version: 1, by: "guest-1")).bytes)
            == "PAGE room=guide page=2 pages=6 version=1 by=guest-1 doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
        #expect(str(Wire.event(guide()).bytes) == "PAGE room=guide page=1 pages=6 version=0 by=- doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
    }

    @Test func navigated() {
        #expect(str(Wire.navigated(state(page: 2, version: 1)).bytes) == "OK page=2 pages=6 version=1 line=1 mark=-\n")
        #expect(str(Wire.navigated(state(page: 1, version: UInt64.max)).bytes) == "OK page=1 pages=6 version=18446744073709551615 line=1 mark=-\n")
    }

    @Test func status() {
        #expect(str(Wire.status(guide(page: 4, version: 6, by: "guest-1"), control: true, clients: 1))
            == "OK room=guide page=4 pages=6 version=6 by=guest-1 doc=5f1c3a2b epoch=0000000000000000 line=1 mark=- wrap=no control=yes clients=1 following=0 browsing=0 hands=0\n")
        let wrapping = RoomSnapshot(name: "s", state: state(), wraps: true)
        #expect(str(Wire.status(wrapping, control: false, clients: 0))
            == "OK room=s page=1 pages=6 version=0 by=- doc=5f1c3a2b epoch=0000000000000000 line=1 mark=- wrap=yes control=no clients=0 following=0 browsing=0 hands=0\n")
    }

    @Test func protocolErrors() {
        #expect(str(Wire.error(ProtocolError(code: .malformed, message: "unknown command \"jump\"; send HELP for the list")))
            == "ERR 400 unknown command \"jump\"; send HELP for the list\n")
        #expect(str(Wire.error(ProtocolError(code: .tooLong, message: "line longer than 4096 bytes"))) == "ERR 413 line longer than 4096 bytes\n")
        #expect(str(Wire.error(ProtocolError(code: .full, message: "server full"))) == "ERR 503 server full\n")
        #expect(str(Wire.error(ProtocolError(code: .internalError, message: "could not save state"))) == "ERR 500 could not save state\n")
        #expect(str(Wire.error(ProtocolError(code: .forbidden, message: "wrong token"))) == "ERR 403 wrong token\n")
        #expect(str(Wire.error(ProtocolError(code: .notFound, message: "no room \"nowhere\""))) == "ERR 404 no room \"nowhere\"\n")
    }

    @Test func cannedErrors() {
        #expect(str(Wire.error(.lineTooLong(maxLineLength: 4096))) == "ERR 413 line longer than 4096 bytes\n")
        #expect(str(Wire.error(.serverFull)) == "ERR 503 server full\n")
        #expect(str(Wire.error(.malformed("empty line"))) == "ERR 400 empty line\n")
    }

    @Test func errorMessagesStayOnOneLine() {
        #expect(str(Wire.error(.malformed("a\nb\r\nc"))) == "ERR 400 a b  c\n")
    }

    @Test func noReplyLineCarriesAControlCharacter() {
        #expect(str(Wire.error(.malformed("a\u{1B}[2Jb\u{7}"))) == "ERR 400 a [2Jb \n")
        #expect(str(Wire.error(.malformed("x\u{9B}31my\u{85}z\u{7F}"))) == "ERR 400 x 31my z \n")
        #expect(str(Wire.ok("PONG a\tb\u{90}c")) == "OK PONG a b c\n")
        #expect(str(Wire.bye("r\u{9F}")) == "BYE r \n")
        #expect(str(Wire.ok("PONG \u{A0}é€")) == "OK PONG \u{A0}é€\n", "U+00A0 and above are not controls")
        let who = str(Wire.multiline(header: "OK WHO\u{9B}", lines: ["ann\u{1B}x", ".b\u{85}"]))
        #expect(who == "OK WHO \nann x\n..b \n.\n")
    }

    @Test func versionExhaustedError() {
        let room = RoomSnapshot(name: "guide", state: state(page: 2, version: UInt64.max), wraps: false)
        #expect(str(Wire.error(NavigationError.versionExhausted, room: room))
            == "ERR 500 \(Wire.versionExhaustedMessage) page=2 pages=6 version=18446744073709551615 by=- doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
    }

    @Test func errorCodes() {
        #expect(ErrorCode.malformed.rawValue == 400)
        #expect(ErrorCode.forbidden.rawValue == 403)
        #expect(ErrorCode.notFound.rawValue == 404)
        #expect(ErrorCode.conflict.rawValue == 409)
        #expect(ErrorCode.tooLong.rawValue == 413)
        #expect(ErrorCode.pastEnd.rawValue == 416)
        #expect(ErrorCode.internalError.rawValue == 500)
        #expect(ErrorCode.full.rawValue == 503)
        #expect(ProtocolError(code: .full, message: "x").closesConnection == false)
    }

    @Test func navigationErrors() {
        let room = guide(page: 3, version: 5, by: "guest-1")
        #expect(str(Wire.error(.forbidden, room: room)) == "ERR 403 this room needs a control token; send AUTH <token>\n")
        #expect(str(Wire.error(.noSuchPage(PageNumber(9)!), room: room)) == "ERR 404 no page 9: this document has 6 pages\n")
        #expect(str(Wire.error(.conflict(expected: 4), room: room))
            == "ERR 409 version is 5, not 4 page=3 pages=6 version=5 by=guest-1 doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
        #expect(str(Wire.error(.pastEnd(.first), room: guide(page: 1, version: 2, by: "guest-1")))
            == "ERR 416 already on the first page page=1 pages=6 version=2 by=guest-1 doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
        #expect(str(Wire.error(.pastEnd(.last), room: guide(page: 6, version: 9)))
            == "ERR 416 already on the last page page=6 pages=6 version=9 by=- doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
        let single = RoomSnapshot(name: "one", state: state(count: 1), wraps: false)
        #expect(str(Wire.error(.noSuchPage(PageNumber(2)!), room: single)) == "ERR 404 no page 2: this document has 1 page\n")
        #expect(str(Wire.error(.noSuchLine(41, lines: 40), room: room))
            == "ERR 416 no line 41: page 3 has 40 lines page=3 pages=6 version=5 by=guest-1 doc=5f1c3a2b epoch=0000000000000000 line=1 mark=-\n")
        #expect(str(Wire.error(.noSuchLine(2, lines: 1), room: room)).hasPrefix("ERR 416 no line 2: page 3 has 1 line page=3 "))
    }

    @Test func ok() {
        #expect(str(Wire.ok("NAME ann")) == "OK NAME ann\n")
        #expect(str(Wire.ok("PONG hello")) == "OK PONG hello\n")
        #expect(str(Wire.ok("AUTH control=yes")) == "OK AUTH control=yes\n")
        #expect(str(Wire.ok("")) == "OK\n")
    }

    @Test func oneLineReplies() {
        #expect(str(Wire.named("ann")) == "OK NAME ann\n")
        #expect(str(Wire.authorized()) == "OK AUTH control=yes\n")
        #expect(str(Wire.pong("hello  there")) == "OK PONG hello  there\n")
        #expect(str(Wire.pong("a\u{1B}b")) == "OK PONG a b\n", "never a control character")
        #expect(str(Wire.pong(nil)) == "OK PONG\n")
        #expect(str(Wire.quitting()) == "OK BYE\n")
        #expect(str(Wire.help()) == "OK HELP\n" + Wire.helpLines.map { $0 + "\n" }.joined() + ".\n")
    }

    /// PROTOCOL.md's `ROOMS` example, byte for byte.
    @Test func roomsLines() {
        let guide = RoomListing(name: "guide", state: RoomState(page: PageNumber(4)!, pageCount: 6, version: 6, by: "ann", doc: "d",
                                                                epoch: Epoch(hex: "42c23c58da713787")!),
                                clients: 1, requiresToken: false, wraps: false)
        let slides = RoomListing(name: "slides", state: RoomState(page: .first, pageCount: 4, version: 0, by: nil, doc: "e",
                                                                  epoch: Epoch(hex: "e9e08c447bc0f56f")!),
                                 clients: 0, requiresToken: true, wraps: true)
        #expect(str(Wire.rooms([guide, slides])) == """
            OK ROOMS 2
            guide page=4 pages=6 version=6 epoch=42c23c58da713787 clients=1 control=open wrap=no
            slides page=1 pages=4 version=0 epoch=e9e08c447bc0f56f clients=0 control=token wrap=yes
            .

            """)
        #expect(str(Wire.rooms([])) == "OK ROOMS 0\n.\n")
    }

    /// PROTOCOL.md's `WHO` example (`--who-page-size 2`), byte for byte.
    @Test func whoLines() {
        let members = [("ann", true, false), ("bob", true, false), ("cy", true, true)].map {
            Wire.whoLine(member: Wire.whoMember(name: $0.0, control: $0.1), isYou: $0.2)
        }
        let first = WhoPage(total: 3, offset: 0, pageSize: 2)
        #expect(str(Wire.who(first, total: 3, lines: members[first.range])) == """
            OK WHO 3 next=2
            ann control=yes view=follow hand=down you=no
            bob control=yes view=follow hand=down you=no
            .

            """)
        let second = WhoPage(total: 3, offset: 2, pageSize: 2)
        #expect(str(Wire.who(second, total: 3, lines: members[second.range])) == "OK WHO 3\ncy control=yes view=follow hand=down you=yes\n.\n")
        let past = WhoPage(total: 3, offset: 5, pageSize: 2)
        #expect(str(Wire.who(past, total: 3, lines: members[past.range])) == "OK WHO 3\n.\n")
        #expect(Wire.whoMember(name: "x", control: false) == "x control=no view=follow hand=down")
        #expect(Wire.whoMember(name: "x", control: true, view: .browse(PageNumber(3)!), hand: true) == "x control=yes view=browse:3 hand=up")
        // The client's parser reads each line back.
        let parsed = WireLine(parsing: members[2])!
        #expect(parsed.head == "cy" && parsed.yesNo("control") == true && parsed.yesNo("you") == true)
    }

    @Test func bye() {
        #expect(str(Wire.bye("server shutting down")) == "BYE server shutting down\n")
        #expect(str(Wire.bye("")) == "BYE\n")
    }

    @Test func multilineDotStuffs() {
        let lines: [Substring] = ["guide page=4", ".hidden", "..two", ".", "", "plain"]
        #expect(str(Wire.multiline(header: "OK ROOMS 2", lines: lines))
            == "OK ROOMS 2\nguide page=4\n..hidden\n...two\n..\n\nplain\n.\n")
        #expect(str(Wire.multiline(header: "OK WHO 0", lines: [Substring]())) == "OK WHO 0\n.\n")
    }

    @Test func multilineSplitsEmbeddedNewlines() {
        #expect(str(Wire.multiline(header: "OK X", lines: ["a\n.b"])) == "OK X\na\n..b\n.\n")
    }

    @Test func multilinePassesPrintableASCIIAsItIsAndReplacesControlsElsewhere() {
        let lines: [Substring] = [" ~x:1 ", ".a b", "a\tb", "x\u{7F}y", "é\u{85}.", "\u{1B}[2J"]
        #expect(str(Wire.multiline(header: "OK INFO", lines: lines))
            == "OK INFO\n ~x:1 \n..a b\na b\nx y\né .\n [2J\n.\n")
    }

    @Test func helpLinesMatchTheCommandTable() {
        let verbs = Wire.helpLines.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(verbs == ["NEXT", "PREV", "FIRST", "LAST", "GOTO", "LINE", "MARK", "STATUS", "TEXT", "NOTES", "ROOMS", "JOIN", "NAME", "WHO", "VIEW", "HAND", "AUTH", "PING", "HELP", "INFO", "QUIT"])
        #expect(Wire.helpLines[0] == "NEXT [IF <version>]            turn to the next page")
        #expect(Wire.helpLines.contains("GOTO <n> [IF <version>]        turn to page n"))
        #expect(Wire.helpLines.contains("QUIT                           close the connection"))
        for line in Wire.helpLines {
            #expect(!line.hasPrefix("."))
            #expect(!line.contains("\n"))
            #expect(line.count > 31)
        }
        // Every verb in the help parses (without its arguments, where it has none).
        for verb in verbs where ["NEXT", "PREV", "FIRST", "LAST", "STATUS", "TEXT", "ROOMS", "WHO", "PING", "HELP", "INFO", "QUIT"].contains(verb) {
            #expect((try? CommandParser.parse(Array(verb.utf8)).get()) != nil)
        }
    }

    @Test func helpReply() {
        let reply = str(Wire.multiline(header: "OK HELP", lines: Wire.helpLines.map { Substring($0) }))
        #expect(reply.hasPrefix("OK HELP\nNEXT [IF <version>]"))
        #expect(reply.hasSuffix("close the connection\n.\n"))
        #expect(reply.split(separator: "\n").count == Wire.helpLines.count + 2)
    }
}

@Suite struct WireTextTests {
    private func text(_ content: [UInt8], truncated: Bool = false) -> String {
        str(Wire.text(page: PageNumber(2)!, pageCount: 6, doc: "5f1c3a2b", bytes: content, pageByteCount: content.count, truncated: truncated))
    }

    @Test func headerAndLines() {
        #expect(text(Array("Turning pages\n.a line that began with a dot\n...\nend\n".utf8))
            == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=52 lines=4 truncated=no\nTurning pages\n..a line that began with a dot\n....\nend\n.\n")
    }

    @Test func crlfContent() {
        #expect(text(Array("a\r\nb\r\n\r\nc".utf8))
            == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=9 lines=4 truncated=no\na\nb\n\nc\n.\n")
    }

    @Test func crNotBeforeLFIsKept() {
        #expect(text(Array("a\rb\n".utf8)) == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=4 lines=1 truncated=no\na\rb\n.\n")
    }

    @Test func emptyPage() {
        #expect(text([]) == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=0 lines=0 truncated=no\n.\n")
        #expect(text([0x0A]) == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=1 lines=1 truncated=no\n\n.\n")
    }

    @Test func invalidUTF8BecomesReplacementCharacter() {
        let reply = text([0x61, 0xFF, 0x62, 0x0A, 0xC3, 0x0A, 0xE2, 0x82, 0xAC, 0x0A])
        #expect(reply == "OK TEXT page=2 pages=6 doc=5f1c3a2b bytes=10 lines=3 truncated=no\na\u{FFFD}b\n\u{FFFD}\n€\n.\n")
    }

    @Test func truncatedAndPageByteCount() {
        let reply = str(Wire.text(page: .first, pageCount: 1, doc: "d", bytes: Array("abc".utf8), pageByteCount: 5000, truncated: true))
        #expect(reply == "OK TEXT page=1 pages=1 doc=d bytes=5000 lines=1 truncated=yes\nabc\n.\n")
    }

    @Test func textRoundTripsThroughDotUnstuffer() {
        let original = ["first", ".dot", "..two dots", ".", "", "last"]
        let bytes = Array(original.joined(separator: "\n").utf8)
        let reply = text(bytes)
        var lines = reply.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(WireLine(parsing: String(lines.removeFirst()))?.fields["lines"] == "6")
        var got: [String] = []
        for line in lines {
            guard let content = DotUnstuffer.unstuff(line) else { break }
            got.append(String(content))
        }
        #expect(got == original)
    }
}

@Suite struct WireNotesTests {
    @Test("NOTES is TEXT's form with its own word: header, dot-stuffing, invalid UTF-8 replaced, empty body")
    func notesReply() {
        func notes(_ bytes: [UInt8], truncated: Bool = false) -> String {
            var encoder = TextReplyEncoder(page: PageNumber(3)!, pageCount: 5, doc: "0123456789ab", bytes: bytes,
                                           pageByteCount: bytes.count + (truncated ? 10 : 0), truncated: truncated, reply: "NOTES")
            var out: [UInt8] = []
            while let chunk = encoder.nextChunk(atLeast: 4) { out += chunk }
            return str(out)
        }
        #expect(notes(Array("say .this\n.slowly".utf8))
            == "OK NOTES page=3 pages=5 doc=0123456789ab bytes=17 lines=2 truncated=no\nsay .this\n..slowly\n.\n")
        #expect(notes([]) == "OK NOTES page=3 pages=5 doc=0123456789ab bytes=0 lines=0 truncated=no\n.\n")
        #expect(notes([0x61, 0xFF, 0xFE, 0x62], truncated: true)
            == "OK NOTES page=3 pages=5 doc=0123456789ab bytes=14 lines=1 truncated=yes\na\u{FFFD}\u{FFFD}b\n.\n")
        #expect(str(Wire.notesForbidden) == "ERR 403 notes are for those with control; send AUTH <token>\n")
        #expect(WireLine(parsing: "OK NOTES page=3 pages=5 doc=x bytes=0 lines=0 truncated=no")?.startsMultilineReply == true)
    }
}
