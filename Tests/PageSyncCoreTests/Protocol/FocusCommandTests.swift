import Testing
import PageSyncCore

private func range(_ a: Int, _ b: Int) -> LineRange { LineRange(first: a, last: b)! }

@Suite("LINE and MARK on the wire")
struct FocusCommandTests {
    @Test("LINE and MARK parse, with IF, in any case", arguments: [
        ("LINE 40", Command.line(40, ifVersion: nil)),
        ("line 1 if 7", .line(1, ifVersion: 7)),
        ("MARK 3-9", .mark(range(3, 9), ifVersion: nil)),
        ("MARK 4", .mark(range(4, 4), ifVersion: nil)),
        ("MARK 4-4 IF 0", .mark(range(4, 4), ifVersion: 0)),
        ("MARK -", .mark(nil, ifVersion: nil)),
        ("mark - IF 12", .mark(nil, ifVersion: 12)),
    ])
    func parses(line: String, command: Command) {
        #expect(parse(line) == .success(command))
    }

    @Test("every bad argument is one ERR 400 naming the problem, with the usage", arguments: [
        ("LINE", "LINE needs a line number: LINE <n> [IF <version>]"),
        ("LINE 0", "lines start at 1; usage: LINE <n> [IF <version>]"),
        ("LINE -3", "\"-3\" is not a line number; usage: LINE <n> [IF <version>]"),
        ("LINE 99999999999999999999", "number too large; usage: LINE <n> [IF <version>]"),
        ("LINE 4 5", "unexpected argument \"5\"; usage: LINE <n> [IF <version>]"),
        ("LINE IF 3", "LINE needs a line number: LINE <n> [IF <version>]"),
        ("LINE 4 IF", "IF needs a version number: LINE <n> [IF <version>]"),
        ("LINE 4 IF 3 IF 3", "IF given twice"),
        ("MARK", "MARK needs lines: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
        ("MARK 9-3", "9-3 goes backwards: a range is <first>-<last>, 3-9"),
        ("MARK 3-", "\"3-\" is not a range of lines; usage: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
        ("MARK -3", "\"-3\" is not a range of lines; usage: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
        ("MARK 0-3", "lines start at 1; usage: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
        ("MARK 2-x", "\"x\" is not a line number; usage: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
        ("MARK 1-2-3", "\"2-3\" is not a line number; usage: MARK <a>[-<b>] [IF <version>], or MARK - to clear"),
    ])
    func refuses(line: String, message: String) {
        #expect(parse(line) == .failure(.malformed(message)))
    }

    @Test("the encoder writes what the parser reads back")
    func roundTrip() {
        let commands: [Command] = [
            .line(1, ifVersion: nil), .line(Int.max, ifVersion: .max), .mark(nil, ifVersion: nil),
            .mark(range(7, 7), ifVersion: 3), .mark(range(1, Int.max), ifVersion: nil),
        ]
        for command in commands {
            let line = CommandEncoder.line(command)
            #expect(parse(line) == .success(command), "\(line)")
        }
        #expect(CommandEncoder.line(.mark(range(3, 9), ifVersion: 7)) == "MARK 3-9 IF 7")
        #expect(CommandEncoder.line(.mark(nil, ifVersion: nil)) == "MARK -")
        #expect(CommandEncoder.line(.line(40, ifVersion: nil)) == "LINE 40")
    }
}
