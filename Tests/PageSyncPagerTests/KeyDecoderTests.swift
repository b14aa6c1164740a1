import Testing
import PageSyncPager

/// Decodes `bytes` fed in one piece, one byte at a time, and split at every position;
/// all three must agree (and leave nothing buffered that is not an Escape).
private func decodeEverySplit(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [Key] {
    var whole = KeyDecoder()
    let expected = whole.feed(bytes) + whole.timeout()
    var bytewise = KeyDecoder()
    var got: [Key] = []
    for b in bytes { got += bytewise.feed([b]) }
    got += bytewise.timeout()
    #expect(got == expected, "byte by byte", sourceLocation: sourceLocation)
    for cut in 0...bytes.count {
        var d = KeyDecoder()
        let keys = d.feed(bytes[..<cut]) + d.feed(bytes[cut...]) + d.timeout()
        #expect(keys == expected, "split at \(cut)", sourceLocation: sourceLocation)
    }
    return expected
}

private func b(_ s: String) -> [UInt8] { Array(s.utf8) }
private let esc = "\u{1B}"

@Suite struct KeyDecoderTests {
    @Test(arguments: [
        ("[A", Key.up), ("[B", .down), ("[C", .right), ("[D", .left),
        ("OA", .up), ("OB", .down), ("OC", .right), ("OD", .left),
        ("[5~", .pageUp), ("[6~", .pageDown),
        ("[H", .home), ("[1~", .home), ("[7~", .home), ("OH", .home),
        ("[F", .end), ("[4~", .end), ("[8~", .end), ("OF", .end),
        ("[1;5C", .right), ("[1;2A", .up), ("[5;5~", .pageUp), ("[1;3H", .home), ("[6;2~", .pageDown),
    ])
    func escapeSequences(_ seq: String, _ key: Key) {
        #expect(decodeEverySplit(b(esc + seq)) == [key])
        // Surrounded by ordinary keys, still exactly one key for the sequence.
        #expect(decodeEverySplit(b("x" + esc + seq + "y")) == [.char("x"), key, .char("y")])
    }

    @Test func completeSequenceNeedsNoTimeout() {
        var d = KeyDecoder()
        #expect(d.feed(b(esc + "[")) == [])
        #expect(d.needsTimeout)
        #expect(d.feed(b("A")) == [.up])
        #expect(!d.needsTimeout)
        #expect(d.bufferedByteCount == 0)
    }

    @Test func loneEscapeWaitsForTimeout() {
        var d = KeyDecoder()
        #expect(d.feed([0x1B]) == [])
        #expect(d.needsTimeout)
        #expect(d.timeout() == [.escape])
        #expect(!d.needsTimeout)
        #expect(d.timeout() == [])
    }

    @Test func escapeFollowedByOrdinaryByteIsEscapeThenKey() {
        #expect(decodeEverySplit(b(esc + "j")) == [.escape, .char("j")])
        #expect(decodeEverySplit([0x1B, 0x1B]) == [.escape, .escape])
        var d = KeyDecoder()
        #expect(d.feed(b(esc + "q")) == [.escape, .char("q")])
        #expect(!d.needsTimeout)
    }

    @Test func cutShortSequenceFlushesOnTimeout() {
        var d = KeyDecoder()
        #expect(d.feed(b(esc + "[1;")) == [])
        #expect(d.timeout() == [.escape, .char("["), .char("1"), .char(";")])
        var e = KeyDecoder()
        #expect(e.feed(b(esc + "O")) == [])
        #expect(e.timeout() == [.escape, .char("O")])
    }

    @Test(arguments: [
        "[2~", "[3~", "[15~", "[200~", "[201~", "[I", "[O", "[<0;10;5M", "[<0;10;5m", "[?1;2c",
        "[M", "[Z", "[2J", "[1;2;3;4;5;6x", "[ q", "OP", "OQ", "[12;5A", "[99~", "[99999999999~",
    ])
    func unknownSequencesAreDropped(_ seq: String) {
        #expect(decodeEverySplit(b("a" + esc + seq + "b")) == [.char("a"), .char("b")])
    }

    @Test func overlongSequenceIsDroppedAndBufferBounded() {
        var d = KeyDecoder()
        let long = b(esc + "[" + String(repeating: "1;", count: 500) + "Hq")
        var keys: [Key] = []
        for byte in long {
            keys += d.feed([byte])
            #expect(d.bufferedByteCount <= KeyDecoder.maxSequenceLength)
        }
        #expect(keys == [.char("q")])
        #expect(!d.needsTimeout)
    }

    @Test func malformedSequenceDropsOnlyItself() {
        // A control byte inside a CSI ends it; the byte decodes on its own.
        #expect(decodeEverySplit(b(esc + "[1") + [0x03]) == [.ctrl("c")])
        #expect(decodeEverySplit(b(esc + "[1é")) == [.char("é")])
    }

    @Test func controlBytes() {
        #expect(decodeEverySplit([0x03, 0x0C, 0x1A, 0x01, 0x00, 0x1C, 0x1F]) ==
                [.ctrl("c"), .ctrl("l"), .ctrl("z"), .ctrl("a"), .ctrl("@"), .ctrl("\\"), .ctrl("_")])
        #expect(decodeEverySplit([0x0D, 0x0A, 0x7F, 0x08, 0x09]) == [.enter, .enter, .backspace, .backspace, .tab])
    }

    @Test func printableAscii() {
        #expect(decodeEverySplit(b(" fbgG/q?")) == " fbgG/q?".map { Key.char($0) })
    }

    @Test func utf8SplitAcrossReads() {
        let text = "é中😀ß"
        #expect(decodeEverySplit(b(text)) == text.unicodeScalars.map { Key.char(Character($0)) })
        var d = KeyDecoder()
        let bytes = b("中")
        #expect(d.feed(bytes[0..<1]) == [])
        #expect(!d.needsTimeout)
        #expect(d.feed(bytes[1..<2]) == [])
        #expect(d.feed(bytes[2...]) == [.char("中")])
    }

    @Test func invalidUtf8IsDropped() {
        #expect(decodeEverySplit([0xFF, 0x61, 0x80, 0x62, 0xC3, 0x63]) == [.char("a"), .char("b"), .char("c")])
        // Overlong encoding of "/" and a UTF-16 surrogate: dropped.
        #expect(decodeEverySplit([0xE0, 0x80, 0xAF, 0xED, 0xA0, 0x80, 0x78]) == [.char("x")])
        // C1 control encoded in UTF-8: dropped.
        #expect(decodeEverySplit([0xC2, 0x9B, 0x41]) == [.char("A")])
    }

    @Test func incompleteUtf8DroppedOnTimeout() {
        var d = KeyDecoder()
        #expect(d.feed([0xE4, 0xB8]) == [])
        #expect(d.timeout() == [])
        #expect(d.feed(b("z")) == [.char("z")])
    }
}
