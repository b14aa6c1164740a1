import Testing
import PageSyncPager

private let E = "\u{1B}"
private func texts(_ rows: [LayoutRow]) -> [String] { rows.map { $0.text } }

@Suite struct LayoutTests {
    @Test func shortLinesOneRowEach() {
        let rows = Layout.rows(lines: ["abc", "", "de"], width: 10, wrap: true)
        #expect(texts(rows) == ["abc", "", "de"])
        #expect(rows.map { $0.line } == [0, 1, 2])
        #expect(rows.map { $0.width } == [3, 0, 2])
        #expect(rows.allSatisfy { $0.isLineStart })
    }

    @Test func wrapsAtWidth() {
        let rows = Layout.rows(lines: ["abcdefghij"], width: 4, wrap: true)
        #expect(texts(rows) == ["abcd", "efgh", "ij"])
        #expect(rows.map { $0.isLineStart } == [true, false, false])
        #expect(rows.map { $0.line } == [0, 0, 0])
    }

    @Test func exactFitDoesNotAddEmptyRow() {
        #expect(texts(Layout.rows(lines: ["abcd"], width: 4, wrap: true)) == ["abcd"])
    }

    @Test func chopsWhenWrapIsOff() {
        let rows = Layout.rows(lines: ["abcdefghij", "xy"], width: 4, wrap: false)
        #expect(texts(rows) == ["abc>", "xy"])  // > in the last column marks a cut line
        #expect(rows.map(\.cutRight) == [true, false])
    }

    @Test func neverSplitsAWideCharacter() {
        // 3 columns: "a中" fills 3, "文" moves whole to the next row.
        let rows = Layout.rows(lines: ["a中文b"], width: 3, wrap: true)
        #expect(texts(rows) == ["a中", "文b"])
        #expect(rows.map { $0.width } == [3, 3])
        let rows2 = Layout.rows(lines: ["a中文"], width: 2, wrap: true)
        #expect(texts(rows2) == ["a", "中", "文"])
        #expect(texts(Layout.rows(lines: ["a中文"], width: 2, wrap: false)) == ["a>"])
    }

    @Test func everyRowFitsForManyWidths() {
        let line = "The 中文 text, e\u{301}t \u{1F600} emoji\tand tabs;\(E)[31m red \(E)[0m 한국어 Ｆｕｌｌ"
        for width in 1...40 {
            for wrap in [true, false] {
                let rows = Layout.rows(lines: [line, line], width: width, wrap: wrap)
                for row in rows {
                    #expect(row.width <= width)
                    #expect(DisplayWidth.of(Sanitizer.plainText(row.text)) == row.width)
                }
                if wrap && width >= 2 {
                    // Nothing lost: the rows put back together are the line.
                    let joined = rows.filter { $0.line == 0 }.map { Sanitizer.plainText($0.text) }.joined()
                    #expect(joined == Sanitizer.plainText(line))
                }
            }
        }
    }

    @Test func combiningMarksStayWithTheirBase() {
        let rows = Layout.rows(lines: ["abe\u{301}cd"], width: 3, wrap: true)
        #expect(texts(rows) == ["abe\u{301}", "cd"])
    }

    @Test func tabsExpandBeforeWrapping() {
        #expect(texts(Layout.rows(lines: ["a\tb"], width: 20, wrap: true)) == ["a       b"])
        #expect(texts(Layout.rows(lines: ["a\tb"], width: 5, wrap: true)) == ["a    ", "   b"])
    }

    @Test func sgrIsCarriedAndResetAtRowEnd() {
        let rows = Layout.rows(lines: ["\(E)[31mabcdef", "gh\(E)[0mij", "kl"], width: 4, wrap: true)
        #expect(texts(rows) == [
            "\(E)[31mabcd\(E)[0m",
            "\(E)[31mef\(E)[0m",
            "\(E)[31mgh\(E)[0mij\(E)[0m",
            "kl",
        ])
    }

    @Test func chopKeepsStyleStateOfTheCutPart() {
        let rows = Layout.rows(lines: ["abcdef\(E)[32mgh", "x"], width: 3, wrap: false)
        #expect(texts(rows) == ["ab\(E)[32m\(E)[0m>", "\(E)[32mx\(E)[0m"])
    }

    @Test func documentCannotDriveTheTerminal() {
        let rows = Layout.rows(lines: ["\(E)[2J\(E)[Hhi\(E)]0;t\u{07}\u{9B}5A"], width: 80, wrap: true)
        #expect(texts(rows) == ["hi"])
    }

    @Test func oneColumnScreen() {
        let rows = Layout.rows(lines: ["a中"], width: 1, wrap: true)
        #expect(texts(rows) == ["a", "?"])
        #expect(Layout.rows(lines: ["ab"], width: 0, wrap: true).count == 2)
    }

    @Test func visibleRowsAndScrollBounds() {
        let rows = Layout.rows(lines: (1...10).map { "line \($0)" }, width: 20, wrap: true)
        #expect(Layout.maxOffset(rowCount: rows.count, height: 4) == 6)
        #expect(Layout.maxOffset(rowCount: 3, height: 4) == 0)
        #expect(Layout.visible(rows, offset: 0, height: 4).map { $0.text } == ["line 1", "line 2", "line 3", "line 4"])
        #expect(Layout.visible(rows, offset: 100, height: 4).map { $0.text } == ["line 7", "line 8", "line 9", "line 10"])
        #expect(Layout.visible(rows, offset: -3, height: 2).map { $0.text } == ["line 1", "line 2"])
        #expect(Layout.visible(rows, offset: 0, height: 50).count == 10)
    }

    @Test func firstRowOfLine() {
        let rows = Layout.rows(lines: ["abcdefgh", "x", "yyyyy"], width: 3, wrap: true)
        #expect(Layout.firstRow(ofLine: 0, in: rows) == 0)
        #expect(Layout.firstRow(ofLine: 1, in: rows) == 3)
        #expect(Layout.firstRow(ofLine: 2, in: rows) == 4)
        #expect(Layout.firstRow(ofLine: 3, in: rows) == nil)
    }

    @Test func tailKeepsTheEndInColumns() {
        #expect(Layout.tail("hello", toWidth: 10) == "hello")
        #expect(Layout.tail("hello world", toWidth: 5) == "world")
        #expect(Layout.tail("中文字", toWidth: 5) == "文字")
        #expect(Layout.tail("中文字", toWidth: 1) == "")  // a wide character never goes half on
        #expect(Layout.tail("cafe\u{301}s", toWidth: 2) == "e\u{301}s")  // the accent stays with its e
        #expect(Layout.tail("x", toWidth: 0) == "")
    }

    @Test func truncate() {
        #expect(Layout.truncate("hello", toWidth: 10) == "hello")
        #expect(Layout.truncate("hello", toWidth: 5) == "hello")
        #expect(Layout.truncate("hello world", toWidth: 5) == "hell…")
        #expect(Layout.truncate("中文字", toWidth: 4) == "中…")
        #expect(Layout.truncate("abc", toWidth: 0) == "")
    }
}
