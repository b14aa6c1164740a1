import TestSupport
import Testing
import PageSyncCore

/// The byte-level encoder of the per-change lines (`PAGE`, the `OK` of a navigation) against
/// the `String` encoding it replaced: `Wire.line` of the same text.
@Suite struct WireLineBuilderTests {
    private static func stringEncoded(_ text: String) -> [UInt8] {
        Array((ControlCharacters.replacingControls(text) + "\n").utf8)
    }

    /// Scalars from every class that matters: ASCII, C0 (CR, LF, ESC), DEL, C1 (its first and
    /// last, and NEL), U+00A0 (also `C2` first, not a control), two-, three- and four-byte UTF-8.
    private static let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "=", "-", "\r", "\n", "\u{1B}", "\u{00}", "\u{1F}", "\u{7F}",
        "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "\u{BF}", "é", "€", "界", "😀", "\u{0301}",
    ]

    private static func randomText(_ rng: inout some RandomNumberGenerator, maxLength: Int = 12) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &rng) { scalars.append(alphabet.randomElement(using: &rng)!) }
        return String(scalars)
    }

    /// What ``WireLineBuilder/text(_:)`` makes of `text`, without the LF.
    private static func sanitized(_ text: String) -> [UInt8] {
        Array(WireLineBuilder.line(capacity: text.utf8.count) { $0.text(text) }.dropLast())
    }

    @Test func controlsAreReplacedAsInTheStringForm() {
        var rng = SeededGenerator(seed: 0x5EED)
        for _ in 0..<2_000 {
            let text = Self.randomText(&rng, maxLength: 24)
            #expect(WireLineBuilder.line(capacity: text.utf8.count) { $0.text(text) } == Self.stringEncoded(text),
                    "\(Array(text.unicodeScalars))")
        }
        #expect(Self.sanitized("\u{85}\u{85}x\u{9F}") == Array("  x ".utf8))
        // U+00A0 and U+00C2: C2 A0, C3 82; neither is a control.
        #expect(Self.sanitized("\u{A0}\u{C2}") == Array("\u{A0}\u{C2}".utf8))
        #expect(Self.sanitized("page=3 doc=é€界😀") == Array("page=3 doc=é€界😀".utf8))
        #expect(Self.sanitized("abc\u{1B}") == Array("abc ".utf8))  // the control is the last byte
        #expect(Self.sanitized("\u{1B}") == Array(" ".utf8))
        #expect(Self.sanitized("") == [])
        // A String is valid UTF-8, so no text ends in a lone C2 and a C1 pair never spans two
        // texts: replacing per text gives what replacing over the whole line gave.
        #expect(WireLineBuilder.line(capacity: 5) { $0.text("a\u{C2}"); $0.text("\u{85}") } == Array("a\u{C2} \n".utf8))
    }

    @Test func pageEventsMatchTheStringForm() {
        var rng = SeededGenerator(seed: 42)
        let versions: [UInt64] = [0, 1, 9, 10, 99, 100, 12_345, UInt64(Int.max), UInt64.max - 1, UInt64.max]
        let epochs: [UInt64] = [0, 1, 0xabc, 0x0123_4567_89ab_cdef, UInt64.max]
        for i in 0..<1_000 {
            let by: String? = i % 3 == 0 ? nil : Self.randomText(&rng)
            var state = RoomState(page: PageNumber(Int.random(in: 1...5_000, using: &rng))!, pageCount: 5_000 + i,
                                  version: versions[i % versions.count], by: by, doc: Self.randomText(&rng))
            state.epoch = Epoch(epochs[i % epochs.count])
            state.line = Int.random(in: 1...Int.max, using: &rng) >> Int.random(in: 0..<63, using: &rng)
            let first = Int.random(in: 1...100_000, using: &rng)
            state.mark = i % 4 == 0 ? nil : LineRange(first: first, last: first + (i % 4 == 1 ? 0 : Int.random(in: 0...Int.max - first, using: &rng)))
            let room = RoomSnapshot(name: Self.randomText(&rng), state: state, wraps: i % 2 == 0, file: "x.md")
            let mark = state.mark.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" } ?? "-"
            let focus = "line=\(state.line) mark=\(mark)"
            let fields = "page=\(state.page) pages=\(state.pageCount) version=\(state.version) by=\(state.by ?? "-") doc=\(state.doc) epoch=\(state.epoch) \(focus)"
            #expect(Wire.stateFields(state) == ControlCharacters.replacingControls(fields))
            #expect(Wire.event(room).bytes == Self.stringEncoded("PAGE room=\(room.name) \(fields)"))
            #expect(Wire.navigated(state).bytes
                == Self.stringEncoded("OK page=\(state.page) pages=\(state.pageCount) version=\(state.version) \(focus)"))
            #expect(NavigatedReply(state).count == Wire.navigated(state).bytes.count)
        }
    }

    /// What `body` writes, without the LF.
    private static func built(_ body: (inout WireLineBuilder) -> Void) -> [UInt8] {
        Array(WireLineBuilder.line(capacity: 40, body).dropLast())
    }

    @Test func numbers() {
        for value: UInt64 in [0, 7, 9, 10, 99, 100, 1_000_000, 9_999_999_999, UInt64.max] {
            #expect(Self.built { $0.decimal(value) } == Array(String(value).utf8))
        }
        for value: Int in [0, -1, 9, -10, 42, Int.max, Int.min] {
            #expect(Self.built { $0.decimal(value) } == Array(String(value).utf8))
        }
        // Every digit count's edges (10^k - 1, 10^k, 10^k + 1) and every power of two's
        // (the length is estimated from the bit length), then random values.
        var edges: [UInt64] = [1, 2, 11, 55, 101]
        var power: UInt64 = 1
        for _ in 0...19 {
            edges += [power - 1, power, power + 1]
            if power <= UInt64.max / 10 { power *= 10 } else { break }
        }
        for bit in 0..<64 { edges += [(1 << bit) - 1, 1 << bit, (1 << bit) + 1] }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { edges.append(generator.next() >> UInt64.random(in: 0..<64)) }
        for value in edges {
            #expect(Self.built { $0.decimal(value) } == Array(String(value).utf8), "\(value)")
            #expect(ByteWriter.decimalDigits(value) == String(value).utf8.count, "\(value)")
        }
        #expect(String(UInt64.max).utf8.count == WireLineBuilder.decimalCapacity)
        #expect(String(Int.min).utf8.count == WireLineBuilder.decimalCapacity)
        for value: UInt64 in [0, 0xf, 0xabc, 0x0123_4567_89ab_cdef, UInt64.max] {
            #expect(Self.built { $0.hex16(value) } == Array(Epoch(value).description.utf8))
        }
    }

    /// The bound each per-change line states covers its longest form: the largest numbers, and
    /// texts whose every byte is kept.
    @Test func theStatedCapacityCoversTheLongestLines() {
        var state = RoomState(page: PageNumber(Int.max)!, pageCount: Int.max, version: UInt64.max, by: "é€界😀", doc: "d😀c")
        state.epoch = Epoch(UInt64.max)
        state.line = Int.max
        state.mark = LineRange(first: Int.max - 1, last: Int.max)
        let room = RoomSnapshot(name: "界😀", state: state, wraps: true)
        let event = Wire.event(room).bytes
        let fields = "page=\(Int.max) pages=\(Int.max) version=\(UInt64.max) by=é€界😀 doc=d😀c epoch=ffffffffffffffff"
            + " line=\(Int.max) mark=\(Int.max - 1)-\(Int.max)"
        #expect(Wire.stateFields(state) == fields)
        #expect(event == Self.stringEncoded("PAGE room=\(room.name) \(fields)"))
        // Only page= and pages= (positive Ints, at most 19 digits) leave room unused.
        // The focus fields' numbers are Ints too: one more byte unused for each of the three.
        #expect(11 + room.name.utf8.count + Wire.stateFieldsCapacity(state) + 1 - event.count == 2 + 3)
        #expect(3 + Wire.positionCapacity + Wire.focusCapacity + 1 - Wire.navigated(state).bytes.count == 2 + 3)
        #expect(NavigatedReply(state).count == Wire.navigated(state).bytes.count)
        #expect(NavigatedReply.capacity == 3 + Wire.positionCapacity + Wire.focusCapacity + 1)
    }

    /// A navigation's OK held as numbers reads as the line it stands for: the same bytes
    /// whether copied or lent, and a count that is exactly their number.
    @Test func aNavigatedReplyIsTheOKLine() {
        var cases: [(Int, Int, UInt64)] = [(1, 1, 0), (9, 10, 99), (10, 10, 100), (99, 100, 9_999_999_999), (Int.max, Int.max, .max)]
        for _ in 0..<500 {
            let count = max(1, Int.random(in: 1...Int.max) >> Int.random(in: 0..<63))
            cases.append((Int.random(in: 1...count), count, UInt64.random(in: 0...UInt64.max) >> UInt64.random(in: 0..<64)))
        }
        for (page, count, version) in cases {
            let line = Int(truncatingIfNeeded: version >> 1) | 1
            let mark = version % 3 == 0 ? nil : LineRange(first: page, last: page + (version % 3 == 1 ? 0 : count - page))
            let reply = NavigatedReply(page: PageNumber(page)!, pageCount: count, version: version, line: line, mark: mark)
            let markText = mark.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" } ?? "-"
            let expected = Array("OK page=\(page) pages=\(count) version=\(version) line=\(line) mark=\(markText)\n".utf8)
            #expect(reply.bytes == expected)
            #expect(reply.withUnsafeBytes { Array($0) } == expected)
            #expect(reply.count == expected.count)
            #expect(Wire.navigated(reply).bytes == expected)
        }
    }
}
