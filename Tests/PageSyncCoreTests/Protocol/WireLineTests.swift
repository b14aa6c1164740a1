import TestSupport
import Testing
import PageSyncCore

/// The client-side parser: ``WireLine``, the ``WireLineView`` it is built on, ``DotUnstuffer`` and
/// ``ReplyAssembler``.

private func str(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func guide(page: Int = 1, version: UInt64 = 0, by: String? = nil) -> RoomSnapshot {
    RoomSnapshot(name: "guide", state: RoomState(page: PageNumber(page)!, pageCount: 6, version: version, by: by, doc: "5f1c3a2b"),
                 wraps: false)
}

/// `body` with a view of `line`'s UTF-8.
private func view<T>(_ line: String, _ body: (WireLineView) -> T) -> T {
    Array(line.utf8).withUnsafeBytes { body(WireLineView($0)) }
}

@Suite struct DotUnstufferTests {
    @Test func unstuff() {
        #expect(DotUnstuffer.unstuff(".") == nil)
        #expect(DotUnstuffer.unstuff("..") == ".")
        #expect(DotUnstuffer.unstuff("...") == "..")
        #expect(DotUnstuffer.unstuff(".x") == "x")
        #expect(DotUnstuffer.unstuff("x.") == "x.")
        #expect(DotUnstuffer.unstuff("") == "")
        #expect(DotUnstuffer.unstuff("plain") == "plain")
    }

    @Test func multilineRoundTrip() {
        let original: [Substring] = [".", "..", "...", ".a", "a.", "", " .", "x"]
        let encoded = str(Wire.multiline(header: "OK WHO 8", lines: original))
        var lines = encoded.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.removeFirst() == "OK WHO 8")
        var decoded: [Substring] = []
        var terminated = false
        for line in lines {
            guard let content = DotUnstuffer.unstuff(line) else { terminated = true; break }
            decoded.append(content)
        }
        #expect(terminated)
        #expect(decoded == original)
    }
}

@Suite struct WireLineTests {
    @Test func helloLine() {
        let line = WireLine(parsing: "HELLO pagesync/1 room=guide page=1 pages=6 version=0 by=- doc=5f1c3a2b epoch=0000000000000000 wrap=no control=yes name=guest-1\n")
        #expect(line?.kind == .hello)
        #expect(line?.words == ["pagesync/1"])
        #expect(line?.fields == ["room": "guide", "page": "1", "pages": "6", "version": "0", "by": "-",
                                 "doc": "5f1c3a2b", "epoch": "0000000000000000", "wrap": "no", "control": "yes", "name": "guest-1"])
    }

    @Test func okLines() {
        let nav = WireLine(parsing: "OK page=2 pages=6 version=1")
        #expect(nav?.kind == .ok)
        #expect(nav?.words == [])
        #expect(nav?.fields == ["page": "2", "pages": "6", "version": "1"])
        let text = WireLine(parsing: "OK TEXT page=2 pages=6 doc=d bytes=120 lines=4 truncated=no\r\n")
        #expect(text?.words == ["TEXT"])
        #expect(text?.fields["truncated"] == "no")
        #expect(WireLine(parsing: "OK PONG hello")?.words == ["PONG", "hello"])
        #expect(WireLine(parsing: "OK ROOMS 2")?.words == ["ROOMS", "2"])
        #expect(WireLine(parsing: "OK")?.words == [])
        #expect(WireLine(parsing: "OK AUTH control=yes")?.fields == ["control": "yes"])
    }

    @Test func errLines() {
        let conflict = WireLine(parsing: "ERR 409 version is 8, not 7 page=3 pages=6 version=8 by=ann doc=xyz")
        #expect(conflict?.kind == .error)
        #expect(conflict?.errorCode == 409)
        #expect(conflict?.words == ["409", "version", "is", "8,", "not", "7"])
        #expect(conflict?.fields == ["page": "3", "pages": "6", "version": "8", "by": "ann", "doc": "xyz"])
        #expect(WireLine(parsing: "ERR 400 empty line")?.errorCode == 400)
        #expect(WireLine(parsing: "OK page=1")?.errorCode == nil)
    }

    @Test func pageAndByeLines() {
        let page = WireLine(parsing: "PAGE room=guide page=2 pages=6 version=1 by=guest-1 doc=5f1c3a2b epoch=0000000000000000")
        #expect(page?.kind == .page)
        #expect(page?.fields["by"] == "guest-1")
        let bye = WireLine(parsing: "BYE server shutting down")
        #expect(bye?.kind == .bye)
        #expect(bye?.words == ["server", "shutting", "down"])
        #expect(bye?.fields == [:])
    }

    @Test func contentLines() {
        let room = WireLine(parsing: "slides page=1 pages=12 version=0 clients=0 control=token wrap=yes")
        #expect(room?.kind == .other)
        #expect(room?.head == "slides")
        #expect(room?.fields["control"] == "token")
    }

    @Test func oddWords() {
        let line = WireLine(parsing: "OK =x a= b=c=d")
        #expect(line?.words == ["=x"])
        #expect(line?.fields == ["a": "", "b": "c=d"])
    }

    @Test func blankLines() {
        #expect(WireLine(parsing: "") == nil)
        #expect(WireLine(parsing: "\n") == nil)
        #expect(WireLine(parsing: "   ") == nil)
    }

    @Test func everyEncodedLineParsesBack() {
        let room = guide(page: 3, version: 5, by: "ann")
        let lines: [[UInt8]] = [
            Wire.hello(room, control: true, name: "x"), Wire.joined(room, control: false, name: "x"),
            Wire.event(room).bytes, Wire.navigated(room.state).bytes, Wire.status(room, control: true, clients: 3),
            Wire.error(.conflict(expected: 1), room: room), Wire.error(.pastEnd(.last), room: room),
        ]
        for line in lines {
            let parsed = WireLine(parsing: str(line))
            #expect(parsed != nil)
            #expect(parsed?.fields["page"] == "3")
            #expect(parsed?.fields["version"] == "5")
        }
        #expect(WireLine(parsing: str(Wire.event(room).bytes))?.fields["by"] == "ann")
    }
}

@Suite struct WireLineFieldRuleTests {
    @Test func onlyLowercaseKeysAreFieldsSoErrorTextStaysText() {
        let line = WireLine(parsing: "ERR 400 unknown command \"a=b\" X=1 page=3")!
        #expect(line.fields == ["page": "3"])
        #expect(line.text == "unknown command \"a=b\" X=1")
        #expect(line.int("page") == 3)
    }

    @Test func helpersReadVersionsBooleansAndMultilineHeaders() {
        let hello = WireLine(parsing: "HELLO pagesync/1 room=r page=1 pages=2 version=9 wrap=no control=yes")!
        #expect(hello.version == 9)
        #expect(hello.yesNo("wrap") == false)
        #expect(hello.yesNo("control") == true)
        #expect(hello.yesNo("room") == nil)
        #expect(WireLine(parsing: "OK WHO 2")!.startsMultilineReply)
        #expect(!WireLine(parsing: "OK NAME TEXT")!.startsMultilineReply)
        #expect(WireLine(parsing: "BYE server shutting down")!.text == "server shutting down")
    }
}

@Suite struct ReplyAssemblerTests {
    @Test func parsesFieldsAndWords() {
        let l = WireLine(parsing: "ERR 409 version is 8, not 7 page=3 pages=6 version=8 by=ann doc=x\r")!
        #expect(l.kind == .error)
        #expect(l.errorCode == 409)
        #expect(l.text == "version is 8, not 7")
        #expect(l.int("page") == 3)
        #expect(l.version == 8)
        #expect(WireLine(parsing: "ERR 400 unknown command \"a=b\"")?.text == "unknown command \"a=b\"")
    }

    @Test func assemblesMultilineReplies() {
        var a = ReplyAssembler()
        #expect(a.feed("OK TEXT page=1 pages=1 doc=x bytes=3 lines=2 truncated=no") == nil)
        #expect(a.feed("..dots") == nil)
        #expect(a.feed("plain\r") == nil)
        guard case .multiline(let h, let lines, let truncated) = a.feed(".") else { Issue.record("no reply"); return }
        #expect(h.words.first == "TEXT")
        #expect(lines == [".dots", "plain"])
        #expect(!truncated)
        #expect(a.feed("OK NAME TEXT") == .line(WireLine(parsing: "OK NAME TEXT")!))
    }

    @Test func blankLinesSayNothingAndResetForgetsAHalfReply() {
        var a = ReplyAssembler()
        #expect(a.feed("") == nil)
        #expect(a.feed("\r") == nil)
        #expect(a.feed("OK WHO 3 next=2") == nil)
        #expect(a.feed("ann control=yes you=no") == nil)
        a.reset()
        #expect(a.feed("PAGE room=a page=2 pages=6 version=3") == .line(WireLine(parsing: "PAGE room=a page=2 pages=6 version=3")!))
        #expect(a.feed(".") == .line(WireLine(parsing: ".")!), "outside a reply, `.` is a line like any other")
    }

    @Test func holdsAtMostMaxContentBytesOfOneReply() {
        var a = ReplyAssembler()
        let line = String(repeating: "x", count: 1023)  // 1 KiB with its LF
        #expect(a.feed("OK TEXT page=1") == nil)
        for _ in 0..<(ReplyAssembler.maxContentBytes / 1024 + 10) { #expect(a.feed(line) == nil) }
        guard case .multiline(_, let lines, let truncated) = a.feed(".") else { Issue.record("no reply"); return }
        #expect(truncated)
        #expect(lines.count == ReplyAssembler.maxContentBytes / 1024)
        #expect(a.feed("OK") == .line(WireLine(parsing: "OK")!), "the next reply starts clean")
    }
}

@Suite struct WireLineViewTests {
    @Test(arguments: [
        ("HELLO pagesync/1 room=a", WireLineKind.hello), ("OK", .ok), ("OK page=2", .ok), ("ERR 400 empty line", .error),
        ("PAGE room=a page=1", .page), ("BYE server shutting down", .bye), ("  OK PONG", .ok),
        ("ok", .other), ("OKAY", .other), ("HELL", .other), ("slides page=1", .other), ("", .other), ("   ", .other),
    ])
    func kindIsTheFirstWord(_ line: String, _ kind: WireLineKind) {
        #expect(view(line) { $0.kind } == kind)
        #expect((WireLine(parsing: line)?.kind ?? .other) == kind)
    }

    @Test func readsFieldsInPlace() {
        let line = "PAGE room=guide page=2 pages=6 version=18446744073709551615 by=guest-1 doc=5f1c3a2b epoch=00000000000000ff\r\n"
        view(line) { page in
            #expect(page.kind == .page)
            #expect(page.uint64("version") == UInt64.max)
            #expect(page.int("version") == nil, "past Int.max")
            #expect(page.int("page") == 2)
            #expect(page.field("by").map { String(decoding: $0, as: UTF8.self) } == "guest-1")
            #expect(page.field("epoch").map { String(decoding: $0, as: UTF8.self) } == "00000000000000ff", "no CR LF")
            #expect(page.field("room").map { String(decoding: $0, as: UTF8.self) } == "guide")
            #expect(page.field("name") == nil)
            #expect(page.field("pag") == nil, "a key is a whole word's part before =")
            #expect(page.firstPlainWord == nil)
        }
    }

    /// Later versions may add fields: a reader asks for the ones it knows and is not disturbed.
    @Test func unknownFieldsAreIgnored() {
        let line = "OK page=2 future=x pages=6 colour=blue version=9 words=\"a b\""
        view(line) { reply in
            #expect(reply.int("page") == 2)
            #expect(reply.int("pages") == 6)
            #expect(reply.uint64("version") == 9)
        }
        let parsed = WireLine(parsing: line)!
        #expect(parsed.int("page") == 2 && parsed.version == 9)
    }

    @Test func badNumbersAreNil() {
        for value in ["", "-3", "+3", "3a", " ", "18446744073709551616", "٣"] {
            view("OK version=\(value) page=\(value)") { line in
                #expect(line.uint64("version") == nil, "\(value)")
                #expect(line.int("page") == nil, "\(value)")
            }
            #expect(WireLine(parsing: "OK version=\(value) page=\(value)")?.version == nil, "\(value)")
            #expect(WireLine(parsing: "OK version=\(value) page=\(value)")?.int("page") == nil, "\(value)")
        }
    }

    @Test func plainWordsAndErrorCodes() {
        view("OK TEXT page=2") { #expect($0.firstPlainWord(is: "TEXT")) }
        view("OK PONG hello") { #expect($0.firstPlainWord(is: "PONG") && !$0.firstPlainWord(is: "PON")) }
        view("OK page=2 pages=6 version=1") { #expect($0.firstPlainWord == nil && !$0.firstPlainWord(is: "TEXT")) }
        view("ERR 409 version is 8, not 7 page=3") { #expect($0.errorCode == 409) }
        for line in ["ERR x", "ERR 4000 long", "ERR", "OK 409", "ERR -400 x"] {
            #expect(view(line) { $0.errorCode } == nil, "\(line)")
            #expect(WireLine(parsing: line)?.errorCode == nil, "\(line)")
        }
    }

    @Test func fieldRule() {
        view("ERR 400 unknown command \"a=b\" X=1 a1=2 =3 page=3") { line in
            #expect(line.field("a") == nil && line.field("X") == nil)
            #expect(line.int("page") == 3)
        }
        #expect(WireLine(parsing: "OK a1=2 Ab=3 =4 ab=5")?.fields == ["ab": "5"])
    }

    @Test func byDashIsNobody() {
        #expect(WireLine(parsing: "PAGE by=- doc=d")?.by == .some(nil))
        #expect(WireLine(parsing: "PAGE by=ann doc=d")?.by == .some("ann"))
        #expect(WireLine(parsing: "PAGE doc=d")?.by == nil)
    }

    @Test func aKeyHeldTwiceCountsTheFirstTime() {
        #expect(view("PAGE version=1 version=2") { $0.uint64("version") } == 1)
        #expect(WireLine(parsing: "PAGE version=1 version=2")?.version == 1)
    }

    @Test func theEndOfAMultilineReply() {
        #expect(view(".") { $0.endsMultilineReply })
        #expect(view(".\r\n") { $0.endsMultilineReply })
        #expect(!view("..") { $0.endsMultilineReply })
        #expect(!view(" .") { $0.endsMultilineReply })
    }

    @Test func invalidUTF8IsReadNotTrusted() {
        let bytes: [UInt8] = Array("OK ".utf8) + [0xFF, 0x3D, 0x31] + Array(" page=2".utf8)
        let parsed = bytes.withUnsafeBytes { WireLine(WireLineView($0)) }
        #expect(parsed?.kind == .ok)
        #expect(parsed?.words == ["\u{FFFD}=1"])
        #expect(parsed?.int("page") == 2)
    }

    /// The view's lookups and ``WireLine``'s fields agree on any line (spaces, `=`, letters of
    /// both cases, digits): the pager and the bench read the same.
    @Test func viewAndWireLineAgree() {
        var rng = SeededGenerator(seed: 7)
        let alphabet = Array("ab=Ab 1 .\r")
        for _ in 0..<20_000 {
            let line = String((0..<Int.random(in: 0...24, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let parsed = WireLine(parsing: line)
            view(line) { v in
                #expect(v.kind == (parsed?.kind ?? .other), "\(line.debugDescription)")
                #expect(v.field("a").map { String(decoding: $0, as: UTF8.self) } == parsed?.fields["a"], "\(line.debugDescription)")
                #expect(v.field("ab").map { String(decoding: $0, as: UTF8.self) } == parsed?.fields["ab"], "\(line.debugDescription)")
                #expect(v.firstPlainWord.map { String(decoding: $0, as: UTF8.self) } == parsed?.words.first, "\(line.debugDescription)")
            }
        }
    }
}
