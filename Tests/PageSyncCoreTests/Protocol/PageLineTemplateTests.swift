import TestSupport
import Testing
import PageSyncCore

/// A room's cached `PAGE` line against ``Wire/event(room:_:)``: the same bytes for every state,
/// whichever of its fields changed since the last line.
@Suite struct PageLineTemplateTests {
    private static let names: [String] = [
        "guest-1", "ann", "a\u{1B}[2Jb", "tab\there", "\u{85}c1", "é€界😀", "", String(repeating: "long-name-", count: 8),
        // Equal as Strings (canonically equivalent), not as bytes; the last two of the same length.
        "\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}",
    ]

    private static func state(page: Int = 1, pages: Int = 6, version: UInt64 = 0, by: String? = nil,
                              doc: String = "5f1c3a2b", epoch: UInt64 = 0x42) -> RoomState {
        RoomState(page: PageNumber(page)!, pageCount: pages, version: version, by: by, doc: doc, epoch: Epoch(epoch))
    }

    @Test func everyLineIsTheEventLine() {
        var rng = SeededGenerator(seed: 0x7A11)
        for room in ["guide", "r\u{07}oom", "界", ""] {
            var template = PageLineTemplate(room: room)
            var current = Self.state()
            for i in 0..<3_000 {
                // Mostly the position moves; now and then the person, the document or the epoch.
                current.page = PageNumber(Int.random(in: 1...9_999, using: &rng))!
                current.pageCount = Int.random(in: 1...Int.max, using: &rng)
                current.version = i % 97 == 0 ? UInt64.max - UInt64(i) : UInt64(i)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: current.by = Bool.random(using: &rng) ? nil : Self.names.randomElement(using: &rng)
                case 1: current.doc = Self.names.randomElement(using: &rng)!
                case 2: current.epoch = Epoch(UInt64.random(in: 0...UInt64.max, using: &rng))
                default: break
                }
                #expect(template.line(current).bytes == Wire.event(room: room, current).bytes,
                        "room \(room), step \(i)")
            }
        }
    }

    @Test func theTailIsEncodedOnlyWhenByDocOrEpochChange() {
        var template = PageLineTemplate(room: "guide")
        #expect(template.tailsEncoded == 0)
        var s = Self.state(by: "ann")
        for step in 1...50 {
            s.page = PageNumber(step % 6 + 1)!
            s.version = UInt64(step)
            #expect(template.line(s).bytes == Wire.event(room: "guide", s).bytes)
        }
        #expect(template.tailsEncoded == 1)
        // Equal text in another string's storage is the same tail: short (held inline) and long.
        s.by = String(["a", "n", "n"])
        _ = template.line(s)
        #expect(template.tailsEncoded == 1)
        s.by = String(repeating: "long-name-", count: 8)
        _ = template.line(s)
        #expect(template.tailsEncoded == 2)
        s.by = (0..<8).map { _ in "long-name-" }.joined()
        #expect(template.line(s).bytes == Wire.event(room: "guide", s).bytes)
        #expect(template.tailsEncoded == 2)
        s.by = "ann"
        _ = template.line(s)
        #expect(template.tailsEncoded == 3)
        // Each of the three fields, one at a time, and back.
        let changes: [(inout RoomState) -> Void] = [
            { $0.by = "bob" }, { $0.by = nil }, { $0.by = "-" }, { $0.doc = "0000" }, { $0.epoch = Epoch(7) },
            { $0.by = "ann"; $0.doc = "5f1c3a2b"; $0.epoch = Epoch(0x42) },
        ]
        for (count, change) in changes.enumerated() {
            change(&s)
            s.version += 1
            #expect(template.line(s).bytes == Wire.event(room: "guide", s).bytes)
            #expect(template.tailsEncoded == count + 4)
        }
        // `by` nil and `by` "-" print alike but are not the same key: both were encoded above.
        // Canonically equivalent names are equal Strings with different bytes: each has its tail.
        for by in ["\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}"] {
            let before = template.tailsEncoded
            s.by = by
            s.version += 1
            #expect(template.line(s).bytes == Wire.event(room: "guide", s).bytes, "\(Array(by.unicodeScalars))")
            #expect(template.tailsEncoded == before + 1)
        }
        s.by = "ann"
        s.version += 1
        #expect(String(decoding: template.line(s).bytes, as: UTF8.self)
            == "PAGE room=guide page=\(s.page) pages=6 version=\(s.version) by=ann doc=5f1c3a2b epoch=0000000000000042 line=1 mark=-\n")
    }

    @Test func theLongestLineFits() {
        var template = PageLineTemplate(room: "界😀")
        let s = Self.state(page: Int.max, pages: Int.max, version: UInt64.max, by: "é€界😀", doc: "d😀c", epoch: UInt64.max)
        #expect(template.line(s).bytes == Wire.event(room: "界😀", s).bytes)
    }
}
