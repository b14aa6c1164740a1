import TestSupport
import Testing
import PageSyncCore

private func page(_ n: Int) -> PageNumber { PageNumber(n)! }

/// Random commands of every kind, with arguments the parser can return: names of 1 to 32 name
/// characters, tokens and ping texts of printable characters (tabs and runs of spaces inside a
/// ping's text), any page, version and offset.
private struct CommandSource {
    var rng: SeededGenerator

    static let nameCharacters = Array("ABCXYZabcxyz0189._-")
    static let tokenCharacters = Array("AZaz09!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~éß✓€\u{A0}漢") + ["\u{301}", "\u{65E}"]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    /// Small numbers, large ones and the largest, about equally often.
    mutating func number(upTo max: UInt64) -> UInt64 {
        switch int(0...3) {
        case 0: UInt64.random(in: 0...9, using: &rng)
        case 1: UInt64.random(in: 0...Swift.min(max, 99_999), using: &rng)
        case 2: UInt64.random(in: 0...max, using: &rng)
        default: max
        }
    }

    mutating func word(_ alphabet: [Character], length: ClosedRange<Int>) -> String {
        String((0..<int(length)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    mutating func pageNumber() -> PageNumber { PageNumber(Int(number(upTo: UInt64(Int.max - 1)))) ?? .first }

    mutating func pingText() -> String? {
        guard int(0...4) > 0 else { return nil }
        var text = word(Self.tokenCharacters, length: 1...12)
        for _ in 0..<int(0...3) {
            text += [" ", "  ", "\t", " \t "].randomElement(using: &rng)! + word(Self.tokenCharacters + ["I", "F"], length: 1...8)
        }
        return text
    }

    mutating func next() -> Command {
        let version: UInt64? = int(0...1) == 0 ? nil : number(upTo: .max)
        switch int(0...17) {
        case 0: return .navigate(.next, ifVersion: version)
        case 1: return .navigate(.previous, ifVersion: version)
        case 2: return .navigate(.first, ifVersion: version)
        case 3: return .navigate(.last, ifVersion: version)
        case 4: return .navigate(.goto(pageNumber()), ifVersion: version)
        case 5: return .status
        case 6: return .text(int(0...1) == 0 ? nil : pageNumber())
        case 7: return .textFrom(pageNumber(), offset: Int(number(upTo: UInt64(Int.max))))
        case 8: return .rooms
        case 9: return .join(word(Self.nameCharacters, length: 1...Names.maxLength))
        case 10: return .name(word(Self.nameCharacters, length: 1...Names.maxLength))
        case 11: return .who(offset: Int(number(upTo: UInt64(Int.max))))
        case 12: return .auth(word(Self.tokenCharacters, length: 1...40))
        case 13: return .ping(pingText())
        case 14: return .notes(int(0...1) == 0 ? nil : pageNumber())
        case 15: return .line(Int(number(upTo: UInt64(Int.max))) | 1, ifVersion: version)
        case 16:
            let first = Int(number(upTo: UInt64(Int.max))) | 1
            return .mark(int(0...2) == 0 ? nil : LineRange(first: first, last: first + Int(min(number(upTo: UInt64(Int.max - first)), UInt64(Int.max - first)))),
                         ifVersion: version)
        default: return [Command.help, .quit, .info(nil), .info(InfoSection.allCases.randomElement(using: &rng)!)].randomElement(using: &rng)!
        }
    }
}

@Suite struct CommandEncoderTests {
    @Test(arguments: [
        (Command.navigate(.next, ifVersion: nil), "NEXT"),
        (.navigate(.next, ifVersion: 7), "NEXT IF 7"),
        (.navigate(.previous, ifVersion: nil), "PREV"),
        (.navigate(.first, ifVersion: 0), "FIRST IF 0"),
        (.navigate(.last, ifVersion: UInt64.max), "LAST IF 18446744073709551615"),
        (.navigate(.goto(page(3)), ifVersion: nil), "GOTO 3"),
        (.navigate(.goto(page(6)), ifVersion: 2), "GOTO 6 IF 2"),
        (.status, "STATUS"),
        (.text(nil), "TEXT"),
        (.text(page(2)), "TEXT 2"),
        (.textFrom(page(2), offset: 4096), "TEXT 2 FROM 4096"),
        (.textFrom(page(1), offset: 0), "TEXT 1 FROM 0"),
        (.rooms, "ROOMS"),
        (.join("slides"), "JOIN slides"),
        (.name("ann"), "NAME ann"),
        (.who(offset: 0), "WHO"),
        (.who(offset: 100), "WHO 100"),
        (.auth("s3cret"), "AUTH s3cret"),
        (.ping(nil), "PING"),
        (.ping("hello   big \t world"), "PING hello   big \t world"),
        (.help, "HELP"),
        (.quit, "QUIT"),
        (.info(nil), "INFO"),
        (.info(.stats), "INFO stats"),
        (.info(.engine), "INFO engine"),
    ])
    func encodesEveryKindAsPROTOCOLWritesIt(_ command: Command, _ line: String) {
        #expect(CommandEncoder.line(command) == line)
        #expect(CommandEncoder.bytes(command) == Array((line + "\n").utf8))
        #expect(parse(line) == .success(command))
    }

    @Test func everyVerbIsOneOfHELPs() {
        let verbs = Set(Wire.helpLines.compactMap { $0.split(separator: " ").first.map(String.init) })
        var source = CommandSource(rng: SeededGenerator(seed: 1))
        for _ in 0..<500 {
            let verb = CommandEncoder.line(source.next()).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
            #expect(verbs.contains(verb), "\(verb)")
        }
    }

    /// The property: the parser reads back every command it can return, whatever its arguments.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func parseOfEncodeIsTheCommand(seed: UInt64) {
        var source = CommandSource(rng: SeededGenerator(seed: seed))
        for _ in 0..<5_000 {
            let command = source.next()
            let bytes = CommandEncoder.bytes(command)
            #expect(bytes.last == 0x0A && bytes.filter { $0 == 0x0A }.count == 1, "\(command)")
            #expect(parse(CommandEncoder.line(command)) == .success(command), "\(command) as \(CommandEncoder.line(command).debugDescription)")
        }
    }

    /// The parser splits words on characters, and a space followed by a combining mark is one
    /// character: before such a token or text the separator is a tab (found by fuzzing:
    /// `PING \t\t\u{65E}N[T` parses to the text `\u{65E}N[T`).
    @Test func anArgumentThatBeginsWithACombiningMarkFollowsATab() {
        for command in [Command.ping("\u{65E}N[T"), .ping("\u{301}"), .auth("\u{301}x"), .ping("e\u{301} \u{301}")] {
            #expect(parse(CommandEncoder.line(command)) == .success(command), "\(command)")
        }
        #expect(CommandEncoder.line(.ping("\u{301}x")) == "PING\t\u{301}x")
        #expect(CommandEncoder.line(.ping("e\u{301}")) == "PING e\u{301}")
        let found: [UInt8] = [0x50, 0x49, 0x4E, 0x47, 0x20, 0x09, 0x09, 0xD9, 0x9E, 0x4E, 0x5B, 0x54, 0x20, 0x20, 0x20, 0x20, 0x20]
        guard case .success(let command) = CommandParser.parse(found) else { Issue.record("no command"); return }
        #expect(parse(CommandEncoder.line(command)) == .success(command))
    }

    /// An argument the parser would refuse is sent as given, and the server refuses it (400);
    /// a line break in it is a space, so it never becomes a second command.
    @Test func argumentsTheParserRefusesStayOneRefusedLine() {
        let cases: [Command] = [
            .auth("right\nQUIT"), .auth("a b"), .name("ann\r\nNEXT"), .join("no/such"), .name(""),
            .who(offset: -1), .textFrom(page(1), offset: -5),
        ]
        for command in cases {
            let line = CommandEncoder.line(command)
            #expect(!line.unicodeScalars.contains { ControlCharacters.isControl($0) }, "\(line.debugDescription)")
            guard case .failure(let error) = parse(line) else { Issue.record("\(line.debugDescription) parsed"); continue }
            #expect(error.code == .malformed)
            #expect(!error.closesConnection)
        }
        #expect(CommandEncoder.line(.auth("right\nQUIT")) == "AUTH right QUIT")
        // A ping's text keeps its tabs (the parser does); other controls are spaces.
        #expect(CommandEncoder.line(.ping("a\tb\u{1B}[2Jc\u{85}")) == "PING a\tb [2Jc ")
        #expect(parse(CommandEncoder.line(.ping("a\tb\u{7F}c"))) == .success(.ping("a\tb c")))
    }
}
