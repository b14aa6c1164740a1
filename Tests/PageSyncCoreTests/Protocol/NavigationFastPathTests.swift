import TestSupport
import Testing
import PageSyncCore

/// The byte-level fast path for navigation commands answers exactly as the general parser does,
/// and only where it is sure.
@Suite struct NavigationFastPathTests {
    private static func fast(_ line: String) -> Command? {
        Array(line.utf8).withUnsafeBufferPointer(NavigationFastPath.parse)
    }

    @Test func theCommonFormsTakeTheFastPath() {
        let cases: [(String, Command)] = [
            ("NEXT", .navigate(.next, ifVersion: nil)),
            ("next", .navigate(.next, ifVersion: nil)),
            ("  Prev\t", .navigate(.previous, ifVersion: nil)),
            ("FIRST IF 0", .navigate(.first, ifVersion: 0)),
            ("last\tif  18446744073709551615", .navigate(.last, ifVersion: UInt64.max)),
            ("GOTO 5", .navigate(.goto(PageNumber(5)!), ifVersion: nil)),
            ("goto 007 If 12", .navigate(.goto(PageNumber(7)!), ifVersion: 12)),
        ]
        for (line, command) in cases {
            #expect(Self.fast(line) == command, "\(line)")
            #expect(CommandParser.parse(Array(line.utf8)) == .success(command), "\(line)")
        }
    }

    @Test func everythingElseGoesToTheGeneralParser() {
        for line in ["", "   ", "NEXT IF", "NEXT IF x", "NEXT IF 1 2", "NEXT 3", "NEXT IF 18446744073709551616",
                     "GOTO", "GOTO 0", "GOTO -1", "GOTO 9223372036854775808", "GOTO IF 3", "GOTO 2 IF", "NEXTT",
                     "STATUS", "PING", "ıf", "NEXT ıf 3", "NEXT\u{1}", "NEXT \u{7F}", "\u{16}\u{03}\u{01}",
                     "NEXT" + String(repeating: " ", count: 70)] {
            #expect(Self.fast(line) == nil, "\(line.debugDescription)")
        }
    }

    /// Lines made of navigation words, numbers, near misses and blanks: wherever the fast path
    /// answers, the general parser gives the same command; `parse` and `parse(bytes:)` always
    /// equal the general parser.
    @Test func agreesWithTheGeneralParser() {
        let vocabulary = ["NEXT", "next", "Prev", "FIRST", "last", "GOTO", "goto", "IF", "if", "iF", "0", "1", "42", "007",
                          "18446744073709551615", "18446744073709551616", "9223372036854775807", "-3", "x", "ıf", "é",
                          "STATUS", "GET", "HTTP/1.1", "\u{1B}", "\u{7F}"]
        let blanks = [" ", "\t", "  ", " \t "]
        var rng = SeededGenerator(seed: 7)
        var answered = 0
        for _ in 0..<20_000 {
            var line = Int.random(in: 0...3, using: &rng) == 0 ? blanks.randomElement(using: &rng)! : ""
            for k in 0..<Int.random(in: 1...5, using: &rng) {
                if k > 0 { line += blanks.randomElement(using: &rng)! }
                line += vocabulary.randomElement(using: &rng)!
            }
            let bytes = Array(line.utf8)
            let general = CommandParser.parseInGeneral(bytes)
            #expect(CommandParser.parse(bytes) == general, "\(line.debugDescription)")
            #expect(bytes.withUnsafeBufferPointer { CommandParser.parse(bytes: $0) } == general, "\(line.debugDescription)")
            if let fast = Self.fast(line) {
                answered += 1
                #expect(general == .success(fast), "\(line.debugDescription)")
            }
        }
        #expect(answered > 500)  // 780 with this seed: the fast path is really exercised
    }
}
