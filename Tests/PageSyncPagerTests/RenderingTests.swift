import Testing
import PageSyncPager

private let E = "\u{1B}"

@Suite struct SGRFilterTests {
    @Test func blinkAndConcealNeverPass() {
        #expect(Sanitizer.sanitize("\(E)[5mblink\(E)[0m") == "blink\(E)[0m")
        #expect(Sanitizer.sanitize("\(E)[8msecret") == "secret")
        #expect(Sanitizer.sanitize("\(E)[1;5;31mx") == "\(E)[1;31mx")
        #expect(Sanitizer.sanitize("\(E)[6;8mx") == "x")
        #expect(Sanitizer.sanitize("\(E)[38;5;5mx") == "\(E)[38;5;5mx", "colour 5 is not blink")
        #expect(Sanitizer.sanitize("\(E)[48;2;5;6;8;1mx") == "\(E)[48;2;5;6;8;1mx")
        #expect(Sanitizer.sanitize("\(E)[mx") == "\(E)[mx", "a reset stays")
    }

    @Test func noColorKeepsStylesDropsColours() {
        #expect(Sanitizer.sanitize("\(E)[1;31mx", colors: .noColor) == "\(E)[1mx")
        #expect(Sanitizer.sanitize("\(E)[38;5;196;4mx", colors: .noColor) == "\(E)[4mx")
        #expect(Sanitizer.sanitize("\(E)[38:2:255:0:0mx", colors: .noColor) == "x")
        #expect(Sanitizer.sanitize("\(E)[0mx", colors: .noColor) == "\(E)[0mx")
        #expect(Sanitizer.sanitize("\(E)[1;31mx\(E)[0m", colors: .none) == "x")
    }

    @Test func policyFromEnvironment() {
        #expect(ColorPolicy.from(noColor: nil, term: "xterm") == .full)
        #expect(ColorPolicy.from(noColor: "", term: "xterm") == .full)
        #expect(ColorPolicy.from(noColor: "1", term: "xterm") == .noColor)
        #expect(ColorPolicy.from(noColor: "1", term: "dumb") == ColorPolicy.none)
        #expect(ColorPolicy.from(noColor: nil, term: nil) == .full)
    }

    @Test func dumbTerminalStatusLineIsNotReversed() {
        var h = Harness(hello: hello(), text: ["\(E)[31mred"], options: PagerOptions(colors: ColorPolicy.none))
        let frame = h.model.frame()
        #expect(!frame.contains("\(E)[7m"))
        #expect(!frame.contains("\(E)[31m"))
        #expect(frame.contains("red"))
    }
}

@Suite struct OverstrikeTests {
    @Test func boldAndUnderlineAsInLess() {
        #expect(Overstrike.render("N\u{08}NA\u{08}AM\u{08}ME\u{08}E") == "\(E)[1mNAME\(E)[22m")
        #expect(Overstrike.render("_\u{08}f_\u{08}i_\u{08}l_\u{08}e") == "\(E)[4mfile\(E)[24m")
        #expect(Overstrike.render("a\u{08}_") == "\(E)[4ma\(E)[24m")
        #expect(Overstrike.render("see N\u{08}NO\u{08}O and _\u{08}x.") == "see \(E)[1mNO\(E)[22m and \(E)[4mx\(E)[24m.")
        #expect(Overstrike.render("+\u{08}o") == "o")
        #expect(Overstrike.render("plain") == "plain")
        #expect(Overstrike.render("\u{08}lone") == "\u{08}lone")
    }

    @Test func sanitizedOverstrikeShowsNoCarets() {
        let shown = Sanitizer.sanitize("N\u{08}NA\u{08}AM\u{08}ME\u{08}E")
        #expect(!shown.contains("^H"))
        #expect(Sanitizer.plainText("N\u{08}NA\u{08}AM\u{08}ME\u{08}E") == "NAME")
        #expect(Sanitizer.sanitize("a\u{08}") == "a^H")
    }
}
