import Testing
import PageSyncPager

private let on = SearchHighlighter.markOn
private let off = SearchHighlighter.markOff

@Suite struct SearchPatternTests {
    @Test func smartCase() throws {
        let lower = try SearchPattern("apple")
        #expect(lower.ignoresCase)
        #expect(lower.matches("An APPLE"))
        #expect(lower.matches("apple pie"))
        #expect(!lower.matches("pear"))
        let upper = try SearchPattern("Apple")
        #expect(!upper.ignoresCase)
        #expect(upper.matches("an Apple"))
        #expect(!upper.matches("an apple"))
        #expect(!upper.matches("an APPLE"))
    }

    @Test func escapesDoNotCountAsUppercase() throws {
        #expect(!SearchPattern.hasUppercase(#"\S+\W\B\D"#))
        #expect(SearchPattern.hasUppercase(#"\sA"#))
        #expect(SearchPattern.hasUppercase("É"))
        #expect(!SearchPattern.hasUppercase("é1_"))
        let p = try SearchPattern(#"x\Sy"#)
        #expect(p.ignoresCase)
        #expect(p.matches("X-Y"))
    }

    @Test func regularExpressions() throws {
        let p = try SearchPattern(#"^ab+c$"#)
        #expect(p.matches("abbbc"))
        #expect(!p.matches("xabc"))
        let alt = try SearchPattern("cat|dog")
        #expect(alt.matches("hot dog"))
        #expect(try SearchPattern(#"\d{3}"#).matches("call 555 now"))
        #expect(try SearchPattern(#"a\.b"#).matches("a.b"))
        #expect(try !SearchPattern(#"a\.b"#).matches("axb"))
    }

    @Test func badPatternsGetOneLineMessages() {
        for bad in ["(", "[a-", "a{2,1}", "*x", #"\"#] {
            #expect(throws: SearchPatternError.self) { try SearchPattern(bad) }
            do { _ = try SearchPattern(bad) } catch {
                #expect(error.message.hasPrefix("bad pattern \(bad): "))
                #expect(!error.message.contains("\n"))
            }
        }
        #expect(throws: SearchPatternError(message: "empty pattern")) { try SearchPattern("") }
    }

    @Test func matchesSeeTheVisibleTextOnly() throws {
        // An SGR sequence between the letters does not hide the word; escape parameters are not text.
        let p = try SearchPattern("red")
        #expect(p.matches("\u{1B}[1mre\u{1B}[0md"))
        #expect(try !SearchPattern("31m").matches("\u{1B}[31mx"))
        // Overstrike (man pages) is matched as its letters.
        #expect(try SearchPattern("name").matches("N\u{8}Na\u{8}am\u{8}me\u{8}e"))
    }

    @Test func rangesAreCharacterOffsetsAndSkipEmptyMatches() throws {
        #expect(try SearchPattern("an").ranges(inPlain: "banana") == [1..<3, 3..<5])
        #expect(try SearchPattern("x*").ranges(inPlain: "axxb") == [1..<3])
        #expect(try SearchPattern("^").ranges(inPlain: "abc") == [])
        #expect(try SearchPattern("é").ranges(inPlain: "café é") == [3..<4, 5..<6])
        #expect(try SearchPattern("中").ranges(inPlain: "中文中") == [0..<1, 2..<3])
    }
}

@Suite struct SearchHighlighterTests {
    @Test func marksEveryMatch() throws {
        let p = try SearchPattern("an")
        #expect(SearchHighlighter.highlight("banana", p) == "b\(on)an\(off)\(on)an\(off)a")
        #expect(SearchHighlighter.highlight("nothing", try SearchPattern("zz")) == "nothing")
    }

    @Test func caseSmartMarks() throws {
        #expect(SearchHighlighter.highlight("Apple apple", try SearchPattern("apple"))
                == "\(on)Apple\(off) \(on)apple\(off)")
        #expect(SearchHighlighter.highlight("Apple apple", try SearchPattern("Apple")) == "\(on)Apple\(off) apple")
    }

    @Test func keepsTheDocumentsStylesAndSurvivesItsReset() throws {
        let line = "\u{1B}[1mbold\u{1B}[0m word"
        let out = SearchHighlighter.highlight(line, try SearchPattern("ld w"))
        #expect(out == "\u{1B}[1mbo\(on)ld\u{1B}[0m\(on) w\(off)ord")
        // A mark inside the document's colour ends by restoring that colour.
        #expect(SearchHighlighter.highlight("\u{1B}[31mred x red", try SearchPattern("x"))
                == "\u{1B}[31mred \(on)x\(off)\u{1B}[31m red")
    }

    @Test func resultIsSanitizedAndLaysOutAtTheSameWidth() throws {
        let line = "a\tb\u{1B}]0;title\u{7}c\u{1B}[2Jd"
        let out = SearchHighlighter.highlight(line, try SearchPattern("b"))
        #expect(!out.contains("\u{1B}]"))
        #expect(!out.contains("\u{1B}[2J"))
        #expect(Sanitizer.plainText(out) == Sanitizer.plainText(line))
        let rows = Layout.rows(lines: [out], width: 40, wrap: true)
        #expect(rows[0].width == Layout.rows(lines: [line], width: 40, wrap: true)[0].width)
    }

    @Test func caretNotationGlyphs() throws {
        // "^A" is one glyph of two characters; a match inside it marks the whole glyph.
        let out = SearchHighlighter.highlight("x\u{1}y", try SearchPattern("A"))
        #expect(out == "x\(on)^A\(off)y")
        #expect(SearchHighlighter.highlight("x\u{1}y", try SearchPattern("y")) == "x^A\(on)y\(off)")
    }

    @Test func dumbTerminalsGetNoMarksButNoColorDoes() throws {
        let p = try SearchPattern("an")
        #expect(SearchHighlighter.highlight("banana", p, colors: .none) == "banana")
        #expect(SearchHighlighter.highlight("banana", p, colors: .noColor) == "b\(on)an\(off)\(on)an\(off)a")
    }
}

@Suite struct PageSearchTests {
    let lines = ["alpha", "beta", "gamma", "alphabet", "delta"]

    @Test func findForwardAndBackward() throws {
        let p = try SearchPattern("alpha")
        #expect(PageSearch.find(p, in: lines, from: -1, forward: true) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: true) == 3)
        #expect(PageSearch.find(p, in: lines, from: 3, forward: true) == nil)
        #expect(PageSearch.find(p, in: lines, from: lines.count, forward: false) == 3)
        #expect(PageSearch.find(p, in: lines, from: 3, forward: false) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: false) == nil)
        #expect(PageSearch.find(p, in: [], from: -1, forward: true) == nil)
        #expect(PageSearch.find(p, in: lines, from: 99, forward: false) == 3)
        #expect(PageSearch.find(p, in: lines, from: -7, forward: true) == 0)
    }

    @Test func findSkipsFilteredLines() throws {
        let p = try SearchPattern("a$")
        let filter = try LineFilter("l")
        #expect(PageSearch.find(p, in: lines, from: -1, forward: true) == 0)
        #expect(PageSearch.find(p, in: lines, from: 0, forward: true, filter: filter) == 4)  // beta, gamma hidden
    }

    @Test func displayFiltersAndMarks() throws {
        let shown = PageSearch.display(lines, search: try SearchPattern("ta"), filter: try LineFilter("e"))
        #expect(shown.origin == [1, 3, 4])
        #expect(shown.lines == ["be\(on)ta\(off)", "alphabet", "del\(on)ta\(off)"])
        let all = PageSearch.display(lines, search: nil, filter: nil)
        #expect(all.lines == lines)
        #expect(all.origin == [0, 1, 2, 3, 4])
        let none = PageSearch.display(lines, search: nil, filter: try LineFilter("zzz"))
        #expect(none.lines.isEmpty && none.origin.isEmpty)
        let others = PageSearch.display(lines, search: nil, filter: try LineFilter("!alpha"))
        #expect(others.lines == ["beta", "gamma", "delta"])
        #expect(others.origin == [1, 2, 4])
    }

    @Test func lineFilters() throws {
        let keep = try LineFilter("Apple")
        #expect(keep.showsMatches && keep.text == "Apple")
        #expect(keep.shows("an Apple") && !keep.shows("an apple"))
        let drop = try LineFilter("!apple")
        #expect(!drop.showsMatches && drop.text == "!apple")
        #expect(!drop.shows("An APPLE") && drop.shows("pear"))
        #expect(throws: SearchPatternError(message: "empty pattern")) { try LineFilter("!") }
        #expect(throws: SearchPatternError.self) { try LineFilter("!(") }
    }

    @Test func nextPageNeverWraps() {
        #expect(PageSearch.nextPage(after: 1, pageCount: 3, forward: true) == 2)
        #expect(PageSearch.nextPage(after: 3, pageCount: 3, forward: true) == nil)
        #expect(PageSearch.nextPage(after: 2, pageCount: 3, forward: false) == 1)
        #expect(PageSearch.nextPage(after: 1, pageCount: 3, forward: false) == nil)
        #expect(PageSearch.nextPage(after: 1, pageCount: 1, forward: true) == nil)
    }
}
