import Testing
import PageSyncCore

@Suite struct TextReplyEncoderTests {
    static let samples: [[UInt8]] = [
        [],
        Array("\n".utf8),
        Array("one line without LF".utf8),
        Array("a\nb\n".utf8),
        Array("crlf\r\nline\r\n.dot\n..two dots\n\r\n".utf8),
        [0x61, 0xFF, 0xFE, 0x0A, 0x62],  // invalid UTF-8
        Array((0..<5000).map { "line \($0) " + String(repeating: "x", count: $0 % 90) + "\n" }.joined().utf8),
    ]

    @Test(arguments: samples.indices)
    func piecesOfAnySizeMakeTheWholeReply(index: Int) {
        let bytes = Self.samples[index]
        let whole = Wire.text(page: PageNumber(2)!, pageCount: 6, doc: "d1", bytes: bytes, pageByteCount: bytes.count + 7, truncated: true)
        for size in [1, 7, 100, 4096, 1 << 20] {
            var encoder = TextReplyEncoder(page: PageNumber(2)!, pageCount: 6, doc: "d1", bytes: bytes, pageByteCount: bytes.count + 7, truncated: true)
            var out: [UInt8] = []
            var pieces = 0
            while let chunk = encoder.nextChunk(atLeast: size) {
                out += chunk
                pieces += 1
                #expect(pieces < 100_000)
            }
            #expect(encoder.isFinished)
            #expect(out == whole, "sample \(index), pieces of \(size)")
        }
    }

    @Test func theHeaderCountsLinesAndEveryPieceEndsAtALineEnd() {
        let bytes = Array("a\nb\nc".utf8)
        var encoder = TextReplyEncoder(page: .first, pageCount: 1, doc: "d", bytes: bytes, pageByteCount: 5, truncated: false)
        #expect(encoder.nextChunk(atLeast: 1) == Array("OK TEXT page=1 pages=1 doc=d bytes=5 lines=3 truncated=no\n".utf8))
        #expect(encoder.nextChunk(atLeast: 1) == Array("a\n".utf8))
        #expect(encoder.nextChunk(atLeast: 1) == Array("b\n".utf8))
        #expect(encoder.nextChunk(atLeast: 1) == Array("c\n.\n".utf8))
        #expect(encoder.nextChunk(atLeast: 1) == nil)
    }
}
