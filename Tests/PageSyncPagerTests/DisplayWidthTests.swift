import Testing
import PageSyncPager

@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("a", 1), (" ", 1), ("~", 1), ("é", 1), ("ß", 1), ("Ж", 1), ("→", 1), ("○", 1), ("●", 1),
        ("中", 2), ("文", 2), ("あ", 2), ("カ", 2), ("한", 2), ("Ａ", 2), ("！", 2), ("、", 2), ("㐀", 2), ("𠀀", 2),
        ("😀", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("🇯🇵", 2), ("☺️", 2), ("❤️", 2), ("ｱ", 1),
        ("e\u{301}", 1), ("中\u{301}", 2), ("\u{200B}", 0), ("\u{200D}", 0), ("\u{301}", 0), ("\u{20DD}", 0),
        ("\u{1160}", 0), ("\u{FEFF}", 0),
    ] as [(Character, Int)])
    func characterWidths(_ c: Character, _ width: Int) {
        #expect(DisplayWidth.of(c) == width, "\(c.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func controlScalarsAreZero() {
        for v: UInt32 in [0, 7, 0x1B, 0x7F, 0x85, 0x9B] {
            #expect(DisplayWidth.of(Unicode.Scalar(v)!) == 0)
        }
    }

    @Test func strings() {
        #expect(DisplayWidth.of("hello") == 5)
        #expect(DisplayWidth.of("中文abc") == 7)
        #expect(DisplayWidth.of("cafe\u{301}") == 4)
        #expect(DisplayWidth.of("") == 0)
    }

    @Test func tabStops() {
        #expect(DisplayWidth.tabStop(after: 0) == 8)
        #expect(DisplayWidth.tabStop(after: 7) == 8)
        #expect(DisplayWidth.tabStop(after: 8) == 16)
        #expect(DisplayWidth.tabStop(after: 13) == 16)
    }

    @Test func wideTableIsSortedAndDisjoint() {
        let r = DisplayWidth.wideRanges
        for i in 1..<r.count { #expect(r[i - 1].upperBound < r[i].lowerBound) }
        #expect(!DisplayWidth.isWide(0x303F))
        #expect(DisplayWidth.isWide(0x3000))
        #expect(!DisplayWidth.isWide(0xFF61))
        #expect(!DisplayWidth.isWide(0x10))
    }
}
