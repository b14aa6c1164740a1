import Testing
import PageSyncCore

/// `CommandParser.parse` of the line's bytes, checked against the server's `parse(bytes:)`
/// (the parser tests and the encoder's round trips).
func parse(_ s: String) -> Result<Command, ProtocolError> {
    let bytes = Array(s.utf8)
    let result = CommandParser.parse(bytes)
    #expect(bytes.withUnsafeBufferPointer { CommandParser.parse(bytes: $0) } == result, "\(s.debugDescription)")
    return result
}

private func command(_ s: String) -> Command? {
    try? parse(s).get()
}

private func error(_ s: String) -> ProtocolError? {
    if case .failure(let e) = parse(s) { return e }
    return nil
}

private func page(_ n: Int) -> PageNumber { PageNumber(n)! }

@Suite struct CommandParserTests {
    // MARK: Commands

    @Test(arguments: [
        ("NEXT", Command.navigate(.next, ifVersion: nil)),
        ("next", .navigate(.next, ifVersion: nil)),
        ("Next", .navigate(.next, ifVersion: nil)),
        ("PREV", .navigate(.previous, ifVersion: nil)),
        ("prev", .navigate(.previous, ifVersion: nil)),
        ("FIRST", .navigate(.first, ifVersion: nil)),
        ("last", .navigate(.last, ifVersion: nil)),
        ("GOTO 3", .navigate(.goto(PageNumber(3)!), ifVersion: nil)),
        ("goto 007", .navigate(.goto(PageNumber(7)!), ifVersion: nil)),
        ("GOTO 9223372036854775807", .navigate(.goto(PageNumber(Int.max)!), ifVersion: nil)),
        ("STATUS", .status),
        ("status", .status),
        ("TEXT", .text(nil)),
        ("text 2", .text(PageNumber(2)!)),
        ("ROOMS", .rooms),
        ("NOTES", .notes(nil)),
        ("notes 3", .notes(PageNumber(3)!)),
        ("JOIN slides", .join("slides")),
        ("join My-Deck_2.v1", .join("My-Deck_2.v1")),
        ("NAME ann", .name("ann")),
        ("WHO", .who(offset: 0)),
        ("who 100", .who(offset: 100)),
        ("WHO 0", .who(offset: 0)),
        ("WHO 007", .who(offset: 7)),
        ("AUTH s3cret", .auth("s3cret")),
        ("auth p@ss:w0rd!", .auth("p@ss:w0rd!")),
        ("PING", .ping(nil)),
        ("ping hello", .ping("hello")),
        ("HELP", .help),
        ("help", .help),
        ("QUIT", .quit),
        ("Quit", .quit),
        ("INFO", .info(nil)),
        ("info all", .info(nil)),
        ("INFO Default", .info(nil)),
        ("INFO server", .info(.server)),
        ("info CLIENTS", .info(.clients)),
        ("INFO rooms", .info(.rooms)),
        ("INFO engine", .info(.engine)),
        ("INFO\tstats", .info(.stats)),
    ])
    func parsesEveryCommand(_ line: String, _ expected: Command) {
        #expect(parse(line) == .success(expected))
    }

    @Test func blanksAndTabsAreIgnored() {
        #expect(command("  next  ") == .navigate(.next, ifVersion: nil))
        #expect(command("\tgoto\t\t4\t") == .navigate(.goto(page(4)), ifVersion: nil))
        #expect(command("GOTO \t 4 \t IF \t 12") == .navigate(.goto(page(4)), ifVersion: 12))
        #expect(command(" \t JOIN \t room ") == .join("room"))
    }

    @Test func namesAndTokensKeepTheirCase() {
        #expect(command("join Slides") == .join("Slides"))
        #expect(command("name Ann") == .name("Ann"))
        #expect(command("auth AbC") == .auth("AbC"))
    }

    // MARK: IF

    @Test func ifForms() {
        #expect(command("NEXT IF 7") == .navigate(.next, ifVersion: 7))
        #expect(command("next if 7") == .navigate(.next, ifVersion: 7))
        #expect(command("prev If 0") == .navigate(.previous, ifVersion: 0))
        #expect(command("FIRST iF 1") == .navigate(.first, ifVersion: 1))
        #expect(command("LAST IF 2") == .navigate(.last, ifVersion: 2))
        #expect(command("GOTO 3 IF 4") == .navigate(.goto(page(3)), ifVersion: 4))
        #expect(command("NEXT IF 18446744073709551615") == .navigate(.next, ifVersion: UInt64.max))
        #expect(command("NEXT IF 00000000000000000000000000042") == .navigate(.next, ifVersion: 42))
    }

    @Test func ifWithoutVersion() {
        #expect(error("NEXT IF")?.message.contains("IF needs a version number") == true)
        #expect(error("goto 3 if")?.message.contains("IF needs a version number") == true)
    }

    @Test func ifVersionOverflow() {
        #expect(error("NEXT IF 18446744073709551616")?.message == "number too large")
        #expect(error("NEXT IF 99999999999999999999999")?.message == "number too large")
    }

    @Test func ifVersionNotDigits() {
        #expect(error("NEXT IF x")?.message == "\"x\" is not a version number")
        #expect(error("NEXT IF -1")?.message == "\"-1\" is not a version number")
        #expect(error("NEXT IF +1")?.message == "\"+1\" is not a version number")
        #expect(error("NEXT IF 1.5")?.message == "\"1.5\" is not a version number")
        #expect(error("NEXT IF ３")?.message == "\"３\" is not a version number")
    }

    @Test func ifWithExtraWords() {
        #expect(error("NEXT IF 3 4")?.message == "unexpected argument \"4\"; usage: NEXT [IF <version>]")
        #expect(error("GOTO 2 IF 3 now")?.message == "unexpected argument \"now\"; usage: GOTO <n> [IF <version>]")
    }

    @Test func ifTwice() {
        #expect(error("NEXT IF IF 3")?.message == "IF given twice")
        #expect(error("NEXT IF 3 IF 4")?.message == "IF given twice")
    }

    @Test func ifAfterNonNavigationVerb() {
        let message = "IF only works after NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK"
        #expect(error("STATUS IF 3")?.message == message)
        #expect(error("TEXT IF 3")?.message == message)
        #expect(error("TEXT 2 IF 3")?.message == message)
        #expect(error("ROOMS if 1")?.message == message)
        #expect(error("WHO IF 1")?.message == message)
        #expect(error("HELP IF 1")?.message == message)
        #expect(error("QUIT IF 1")?.message == message)
        #expect(error("JOIN room IF 1")?.message == message)
        #expect(error("NAME ann IF 1")?.message == message)
        #expect(error("AUTH tok IF 1")?.message == message)
    }

    @Test func ifAsVerb() {
        #expect(error("IF 3")?.message == "IF must follow NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK")
        #expect(error("if")?.code == .malformed)
    }

    @Test func navigationWithStrayArgument() {
        #expect(error("NEXT 3")?.message == "unexpected argument \"3\"; usage: NEXT [IF <version>]")
        #expect(error("PREV now")?.message == "unexpected argument \"now\"; usage: PREV [IF <version>]")
        #expect(error("FIRST 1")?.message == "unexpected argument \"1\"; usage: FIRST [IF <version>]")
        #expect(error("LAST x")?.message == "unexpected argument \"x\"; usage: LAST [IF <version>]")
    }

    // MARK: GOTO and numbers

    @Test func gotoZero() {
        #expect(error("GOTO 0")?.message == "page numbers start at 1")
        #expect(error("GOTO 000")?.message == "page numbers start at 1")
        #expect(error("TEXT 0")?.message == "page numbers start at 1")
    }

    @Test func gotoNegative() {
        #expect(error("GOTO -1")?.message == "page numbers start at 1")
        #expect(error("TEXT -5")?.message == "page numbers start at 1")
    }

    @Test func gotoOverflow() {
        #expect(error("GOTO 99999999999999999999999")?.message == "number too large")
        #expect(error("GOTO 9223372036854775808")?.message == "number too large")
        #expect(error("TEXT 99999999999999999999999")?.message == "number too large")
    }

    @Test func gotoNotANumber() {
        #expect(error("GOTO three")?.message == "\"three\" is not a page number")
        #expect(error("GOTO 3a")?.message == "\"3a\" is not a page number")
        #expect(error("GOTO +3")?.message == "\"+3\" is not a page number")
        #expect(error("GOTO -")?.message == "\"-\" is not a page number")
        #expect(error("GOTO 0x10")?.message == "\"0x10\" is not a page number")
        #expect(error("TEXT two")?.message == "\"two\" is not a page number")
    }

    @Test func gotoMissingPage() {
        #expect(error("GOTO")?.message == "GOTO needs a page number: GOTO <n> [IF <version>]")
        #expect(error("GOTO IF 3")?.message == "GOTO needs a page number: GOTO <n> [IF <version>]")
    }

    @Test func gotoExtraArgument() {
        #expect(error("GOTO 3 4")?.message == "unexpected argument \"4\"; usage: GOTO <n> [IF <version>]")
    }

    // MARK: Arguments of other commands

    @Test func whoOffsetErrors() {
        #expect(error("WHO -1")?.message == "\"-1\" is not an offset; usage: WHO [<offset>]")
        #expect(error("WHO x")?.message == "\"x\" is not an offset; usage: WHO [<offset>]")
        #expect(error("WHO 1 2")?.message == "unexpected argument \"2\"; usage: WHO [<offset>]")
        #expect(error("WHO 99999999999999999999")?.message == "number too large")
        #expect(command("WHO 9223372036854775807") == .who(offset: Int.max))
    }

    @Test(arguments: ["STATUS", "ROOMS", "HELP", "QUIT"])
    func noArgumentCommandsRejectExtras(_ verb: String) {
        #expect(error("\(verb) extra")?.message == "unexpected argument \"extra\"; usage: \(verb)")
        #expect(error("\(verb.lowercased()) x y")?.message == "unexpected argument \"x\"; usage: \(verb)")
    }

    @Test func infoSectionErrors() {
        #expect(error("INFO memory")?.message == "no INFO section \"memory\"; sections: server, clients, rooms, engine, stats, all")
        #expect(error("INFO stats rooms")?.message == "unexpected argument \"rooms\"; usage: INFO [<section>]")
        #expect(error("INFO IF 3")?.message == "IF only works after NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK")
        #expect(error("INFO stats IF 3")?.message == "IF only works after NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK")
    }

    @Test func textExtraArgument() {
        #expect(error("TEXT 1 2")?.message == "unexpected argument \"2\"; usage: TEXT [<n>]")
        #expect(error("NOTES 1 2")?.message == "unexpected argument \"2\"; usage: NOTES [<n>]")
        #expect(error("NOTES 0")?.message == "page numbers start at 1")
        #expect(error("NOTES x")?.message == "\"x\" is not a page number")
    }

    @Test func joinAndNameNeedAnArgument() {
        #expect(error("JOIN")?.message == "JOIN needs a room name: JOIN <room>")
        #expect(error("NAME")?.message == "NAME needs a name: NAME <name>")
        #expect(error("AUTH")?.message == "AUTH needs a token: AUTH <token>")
        #expect(error("join \t ")?.message == "JOIN needs a room name: JOIN <room>")
    }

    @Test func joinNameAuthRejectExtras() {
        #expect(error("JOIN a b")?.message == "unexpected argument \"b\"; usage: JOIN <room>")
        #expect(error("NAME ann bob")?.message == "unexpected argument \"bob\"; usage: NAME <name>")
        #expect(error("AUTH my token")?.message == "unexpected argument \"token\"; usage: AUTH <token>")
    }

    @Test(arguments: ["a/b", "ann!", "über", "x:y", "name,other", String(repeating: "n", count: 33), "a\u{A0}"])
    func invalidNames(_ name: String) {
        let nameError = error("NAME \(name)")
        #expect(nameError?.code == .malformed)
        #expect(nameError?.message == "invalid name \"\(name)\": use 1-32 characters from A-Z a-z 0-9 . _ -")
        let roomError = error("JOIN \(name)")
        #expect(roomError?.message == "invalid room name \"\(name)\": use 1-32 characters from A-Z a-z 0-9 . _ -")
    }

    @Test(arguments: ["a", "A.b_c-d", "0", "...", "-", String(repeating: "n", count: 32)])
    func validNames(_ name: String) {
        #expect(command("NAME \(name)") == .name(name))
        #expect(command("JOIN \(name)") == .join(name))
    }

    @Test func ifIsAnOrdinaryArgumentForNameJoinAuth() {
        #expect(command("NAME IF") == .name("IF"))
        #expect(command("JOIN if") == .join("if"))
        #expect(command("AUTH IF") == .auth("IF"))
    }

    // MARK: PING

    @Test func pingTakesTheRestVerbatimTrimmed() {
        #expect(command("PING") == .ping(nil))
        #expect(command("ping   ") == .ping(nil))
        #expect(command("ping \t") == .ping(nil))
        #expect(command("PING hello") == .ping("hello"))
        #expect(command("  ping  hello   big \t world  ") == .ping("hello   big \t world"))
        #expect(command("PING IF 3") == .ping("IF 3"))
        #expect(command("PING héllo ✓") == .ping("héllo ✓"))
        #expect(command("ping\tx") == .ping("x"))
    }

    // MARK: Bad lines

    @Test(arguments: ["", " ", "\t", "  \t  "])
    func emptyLine(_ s: String) {
        #expect(error(s) == ProtocolError(code: .malformed, message: "empty line"))
    }

    @Test func nulByte() {
        #expect(CommandParser.parse([0x4E, 0x45, 0x58, 0x54, 0x00]) == .failure(.malformed("NUL byte in line")))
        #expect(CommandParser.parse([0x00]) == .failure(.malformed("NUL byte in line")))
        #expect(CommandParser.parse(Array("PING a\u{0}b".utf8)) == .failure(.malformed("NUL byte in line")))
    }

    @Test func invalidUTF8() {
        let e = ProtocolError.malformed("line is not valid UTF-8")
        #expect(CommandParser.parse([0x4E, 0x45, 0x58, 0x54, 0xFF]) == .failure(e))
        #expect(CommandParser.parse([0x50, 0x49, 0x4E, 0x47, 0x20, 0xC3]) == .failure(e))   // truncated sequence
        #expect(CommandParser.parse([0xC0, 0x80]) == .failure(e))                           // overlong NUL
        #expect(CommandParser.parse([0xED, 0xA0, 0x80]) == .failure(e))                     // surrogate
    }

    @Test func controlCharacters() {
        #expect(error("NEXT\u{1B}[2J")?.message == "control character 0x1B in line")
        #expect(error("PING a\rb")?.message == "control character 0x0D in line")
        #expect(error("\u{1}")?.message == "control character 0x01 in line")
        #expect(error("ping \u{7}")?.message == "control character 0x07 in line")
        #expect(error("ping a\nb")?.message == "control character 0x0A in line")
    }

    @Test func c1ControlsAndDELAreRefusedLikeC0() {
        #expect(error("PING a\u{85}b")?.message == "control character U+0085 in line")
        #expect(error("NEXT\u{9B}2J")?.message == "control character U+009B in line")
        #expect(error("PING \u{80}")?.message == "control character U+0080 in line")
        #expect(error("PING \u{9F}")?.message == "control character U+009F in line")
        #expect(error("PING \u{7F}")?.message == "control character 0x7F in line")
        #expect(error("PING \u{85}")?.code == .malformed)
        #expect(command("PING \u{A0}x") == .ping("\u{A0}x"), "U+00A0 is not a control")
        #expect(command("PING \u{7E}") == .ping("~"))
        #expect(command("PING a\tb") == .ping("a\tb"), "tab separates words")
    }

    /// The TLS check is the connection's (``CrossProtocolGuard``), on its first byte only: a
    /// line that begins with 0x16 is, to the parser, a line with a control character.
    @Test func aLineBeginningWithTheTLSHandshakeByteIsAnOrdinaryBadLine() {
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xF8, 0x01, 0x00, 0x00, 0xF4, 0x03, 0x03]
        #expect(CommandParser.parse(hello) == .failure(.malformed("NUL byte in line")), "a whole handshake: its NUL bytes first")
        #expect(CommandParser.parse([0x16] + Array("abc".utf8)) == .failure(.malformed("control character 0x16 in line")))
        #expect(error("\u{16}abc")?.closesConnection == false)
        #expect(error("x\u{16}")?.closesConnection == false, "0x16 later in a line is an ordinary control character")
    }

    @Test func unknownVerb() {
        #expect(error("jump") == ProtocolError(code: .malformed, message: "unknown command \"jump\"; send HELP for the list"))
        #expect(error("JUMP 3")?.message == "unknown command \"JUMP\"; send HELP for the list")
        #expect(error("nextt")?.message == "unknown command \"nextt\"; send HELP for the list")
        #expect(error("GET")?.message == "unknown command \"GET\"; send HELP for the list")
        #expect(error("GET /")?.closesConnection == false)
    }

    @Test func ordinaryErrorsKeepTheConnection() {
        for line in ["", "jump", "GOTO 0", "NEXT IF", "NAME a/b", "IF 3"] {
            #expect(error(line)?.closesConnection == false)
            #expect(error(line)?.code == .malformed)
        }
    }

    // MARK: HTTP

    @Test(arguments: [
        "GET / HTTP/1.1",
        "GET /index.html HTTP/1.0",
        "POST /api HTTP/1.1",
        "HEAD / HTTP/2",
        "PUT /x HTTP/1.1",
        "DELETE /x HTTP/1.1",
        "OPTIONS * HTTP/1.1",
        "PATCH /x HTTP/1.1",
        "CONNECT example.com:443 HTTP/1.1",
        "TRACE / HTTP/1.1",
        "PRI * HTTP/2.0",  // the HTTP/2 connection preface (h2c with prior knowledge)
        "get / http/1.1",
        "GET /a b c HTTP/1.1",
        "Host: localhost:7777",
        "host: x",
        "HOST:x",
    ])
    func httpIsRefusedAndClosesTheConnection(_ line: String) {
        let e = error(line)
        #expect(e?.code == .malformed)
        #expect(e?.message == "this is a pagesync server, not an HTTP server")
        #expect(e?.closesConnection == true)
    }

    @Test func notQuiteHTTP() {
        #expect(error("GET / HTTP/x")?.closesConnection == false)
        #expect(error("FETCH / HTTP/1.1")?.closesConnection == false)
        #expect(error("Hostname: x")?.closesConnection == false)
        #expect(command("PING GET / HTTP/1.1") == .ping("GET / HTTP/1.1"))
    }

    @Test func acceptsAnyCollectionOfBytes() {
        let slice = Array("xxNEXTxx".utf8)[2..<6]
        #expect(CommandParser.parse(slice) == .success(.navigate(.next, ifVersion: nil)))
        #expect(CommandParser.parse("help".utf8) == .success(.help))
    }
}
