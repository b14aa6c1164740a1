import TestSupport
import Testing
import PageSyncPager

private let E = "\u{1B}"

/// Nothing that can drive a terminal: no control character except ESC, and every ESC
/// starts a well-formed SGR sequence.
private func isSafe(_ s: String) -> Bool {
    let scalars = Array(s.unicodeScalars)
    var i = 0
    while i < scalars.count {
        let v = scalars[i].value
        if v == 0x1B {
            guard i + 1 < scalars.count, scalars[i + 1] == "[" else { return false }
            var j = i + 2
            while j < scalars.count, ("0"..."9").contains(scalars[j]) || scalars[j] == ";" || scalars[j] == ":" { j += 1 }
            guard j < scalars.count, scalars[j] == "m" else { return false }
            i = j + 1
            continue
        }
        if v < 0x20 || (0x7F...0x9F).contains(v) { return false }
        i += 1
    }
    return true
}

@Suite struct SanitizerTests {
    @Test func plainTextUnchanged() {
        #expect(Sanitizer.sanitize("hello, 世界 é") == "hello, 世界 é")
    }

    @Test(arguments: ["\(E)[31m", "\(E)[0m", "\(E)[m", "\(E)[1;4;38;5;196m", "\(E)[38:2:255:0:0m", "\(E)[48;2;1;2;3m"])
    func sgrPassesThrough(_ sgr: String) {
        #expect(Sanitizer.sanitize("a\(sgr)b") == "a\(sgr)b")
        #expect(Sanitizer.pieces("\(sgr)") == [.sgr(sgr)])
    }

    @Test(arguments: [
        "\(E)[2J", "\(E)[H", "\(E)[10;20H", "\(E)[A", "\(E)[?1049h", "\(E)[?25l", "\(E)[6n", "\(E)[r", "\(E)[3;5r",
        "\(E)[>c", "\(E)[!p", "\(E)[?1m", "\(E)[>4;2m", "\(E)[1 m", "\(E)[K", "\(E)[200~",
        "\(E)]0;pwned\u{07}", "\(E)]0;pwned\(E)\\", "\(E)]8;;http://x\(E)\\", "\(E)]52;c;Zm9v\u{07}",
        "\(E)Pq#0;2;0;0;0\(E)\\", "\(E)P+q544e\(E)\\", "\(E)X sos \(E)\\", "\(E)^ pm \(E)\\", "\(E)_ apc \(E)\\",
        "\(E)c", "\(E)7", "\(E)8", "\(E)M", "\(E)D", "\(E)=", "\(E)(0", "\(E)(B", "\(E)#8", "\(E)%G",
        "\u{9B}2J", "\u{9D}0;title\u{07}", "\u{9D}0;title\u{9C}", "\u{90}qdata\u{9C}", "\u{9F}x\u{9C}", "\u{9C}",
    ])
    func otherSequencesAreDropped(_ seq: String) {
        #expect(Sanitizer.sanitize("a\(seq)b") == "ab")
        #expect(isSafe(Sanitizer.sanitize(seq)))
    }

    @Test func eightBitCSIIsTreatedLikeTheSevenBitForm() {
        #expect(Sanitizer.sanitize("a\u{9B}31mb") == "a\(E)[31mb")
    }

    @Test func unterminatedSequencesAreDroppedToEndOfLine() {
        #expect(Sanitizer.sanitize("a\(E)]0;title never ends") == "a")
        #expect(Sanitizer.sanitize("a\(E)Pdcs never ends") == "a")
        #expect(Sanitizer.sanitize("a\(E)[12;") == "a")
        #expect(Sanitizer.sanitize("a\(E)") == "a")
    }

    @Test func malformedCSIDropsOnlyItself() {
        #expect(Sanitizer.sanitize("a\(E)[1é") == "aé")
        #expect(Sanitizer.sanitize("a\(E)[1\u{07}b") == "a^Gb")
        #expect(Sanitizer.sanitize("\(E)é") == "é")
    }

    @Test func escapeInsideOSCStartsANewSequence() {
        #expect(Sanitizer.sanitize("\(E)]0;t\(E)[31mred") == "\(E)[31mred")
    }

    @Test func controlCharactersAreVisible() {
        #expect(Sanitizer.sanitize("a\u{07}b\u{08}\u{08}c\u{00}d\u{7F}e\rf") == "a^Gb^H^Hc^@d^?e^Mf")
        #expect(Sanitizer.sanitize("b\u{08}c") == "c", "an overstrike shows what was struck last, as in less")
        #expect(Sanitizer.sanitize("x\u{85}y\u{8D}") == "x<85>y<8D>")
        #expect(Sanitizer.pieces("\u{01}") == [.glyph("^A", width: 2)])
        #expect(Sanitizer.sanitize("a\r\nb") == "a^M^Jb")
    }

    @Test func overlongSGRIsDropped() {
        let long = "\(E)[" + String(repeating: "1;", count: 100) + "m"
        #expect(Sanitizer.sanitize("a\(long)b") == "ab")
    }

    @Test func tabsExpandToMultiplesOfEight() {
        #expect(Sanitizer.sanitize("\tx") == "        x")
        #expect(Sanitizer.sanitize("abc\tx") == "abc     x")
        #expect(Sanitizer.sanitize("12345678\tx") == "12345678        x")
        #expect(Sanitizer.sanitize("中文\tx") == "中文    x")  // 4 columns, then 4 spaces
        #expect(Sanitizer.sanitize("\(E)[31ma\tb") == "\(E)[31ma       b")  // SGR takes no columns
        #expect(Sanitizer.sanitize("^\u{01}\tz") == "^^A     z")
    }

    @Test func plainTextStripsSGR() {
        #expect(Sanitizer.plainText("\(E)[1mbold\(E)[0m \(E)]0;x\u{07}text") == "bold text")
    }

    @Test func widthsOfGlyphs() {
        #expect(Sanitizer.pieces("a中e\u{301}") == [.glyph("a", width: 1), .glyph("中", width: 2), .glyph("e\u{301}", width: 1)])
    }

    @Test func fuzzedInputIsAlwaysSafe() {
        var rng = SeededGenerator(seed: 42)
        let alphabet: [Unicode.Scalar] = ["\u{1B}", "[", "]", "P", "\\", "\u{07}", "\u{9B}", "\u{9D}", "\u{9C}", "\u{90}",
                                          "m", "H", "J", "0", "1", ";", "?", "a", "中", "\u{301}", "\r", "\u{00}", "\u{7F}",
                                          "\u{85}", " ", "(", "#", "\t", "!", ":", "\u{1B}", "\u{1B}"]
        for _ in 0..<3000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int(rng.next() % 24) { s.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            let line = String(s)
            #expect(isSafe(Sanitizer.sanitize(line)), "\(line.unicodeScalars.map { $0.value })")
            for case .glyph(let g, _) in Sanitizer.pieces(line) {
                #expect(!g.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
            }
        }
    }
}
