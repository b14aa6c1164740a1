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

    @Test func controlsAreReplacedAsInTheStringForm() {
        var rng = SeededGenerator(seed: 0x5EED)
        for _ in 0..<2_000 {
            let text = Self.randomText(&rng, maxLength: 24)
            var builder = WireLineBuilder(capacity: 0)
            builder.text(text)
            #expect(builder.finish() == Self.stringEncoded(text), "\(Array(text.unicodeScalars))")
        }
        var only = Array("\u{85}\u{85}x\u{9F}".utf8)
        ControlCharacters.replaceControls(inUTF8: &only)
        #expect(only == Array("  x ".utf8))
        var nbsp = Array("\u{A0}\u{C2}".utf8)  // U+00A0 and U+00C2: C2 A0, C3 82; neither is a control
        ControlCharacters.replaceControls(inUTF8: &nbsp)
        #expect(nbsp == Array("\u{A0}\u{C2}".utf8))
        var clean = Array("page=3 doc=é€界😀".utf8)  // no candidate byte: left as it is
        ControlCharacters.replaceControls(inUTF8: &clean)
        #expect(clean == Array("page=3 doc=é€界😀".utf8))
        var last = Array("abc\u{1B}".utf8)  // the first control is the last byte
        ControlCharacters.replaceControls(inUTF8: &last)
        #expect(last == Array("abc ".utf8))
        var c2Last = Array("ab".utf8) + [0xC2]  // a lone C2 at the end (not valid UTF-8): kept
        ControlCharacters.replaceControls(inUTF8: &c2Last)
        #expect(c2Last == Array("ab".utf8) + [0xC2])
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
            let room = RoomSnapshot(name: Self.randomText(&rng), state: state, wraps: i % 2 == 0, file: "x.md")
            let fields = "page=\(state.page) pages=\(state.pageCount) version=\(state.version) by=\(state.by ?? "-") doc=\(state.doc) epoch=\(state.epoch)"
            #expect(Wire.stateFields(state) == fields)
            #expect(Wire.event(room) == Self.stringEncoded("PAGE room=\(room.name) \(fields)"))
            #expect(Wire.navigated(state)
                == Self.stringEncoded("OK page=\(state.page) pages=\(state.pageCount) version=\(state.version)"))
        }
    }

    @Test func numbers() {
        for value: UInt64 in [0, 7, 10, 1_000_000, UInt64.max] {
            var b = WireLineBuilder(capacity: 0)
            b.decimal(value)
            #expect(b.bytes == Array(String(value).utf8))
        }
        for value: Int in [0, -1, 42, Int.max, Int.min] {
            var b = WireLineBuilder(capacity: 0)
            b.decimal(value)
            #expect(b.bytes == Array(String(value).utf8))
        }
        for value: UInt64 in [0, 0xf, 0xabc, UInt64.max] {
            var b = WireLineBuilder(capacity: 0)
            b.hex16(value)
            #expect(b.bytes == Array(Epoch(value).description.utf8))
        }
    }
}
