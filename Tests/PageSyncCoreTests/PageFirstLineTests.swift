import Testing
import PageSyncCore

/// `firstline=`: the file line each page starts on, counted while indexing, the same however
/// the file comes in chunks, and equal to counting the line feeds before the page's first byte.
@Suite struct PageFirstLineTests {
    static let texts: [String] = [
        "one\ntwo\n\u{0C}\nthree\nfour\n\u{0C}five",
        "a\r\n\u{0C}\r\nb\nc\n\u{0C}\u{0C}d\n",
        "intro\n---\nslide one\nmore\n---  \nslide two\n---\n",
        (1...95).map { "line \($0)" }.joined(separator: "\n") + "\n",
        "NAME\n       ls - list\n\nSYNOPSIS\n       ls [OPTION]\n\nDESCRIPTION\n       List.\n\nSEE ALSO\n  dir\n",
        "",
    ]

    static func bruteForce(_ bytes: [UInt8], _ index: PageIndex) -> [Int] {
        (1...index.count).map { n in bytes[..<index.byteRange(of: PageNumber(n)!).lowerBound].filter { $0 == 0x0A }.count + 1 }
    }

    @Test(arguments: [Pagination.formFeed, .separator("---"), .lines(7), .headings, .markdown])
    func everyChunkingAgreesWithCounting(_ pagination: Pagination) {
        for text in Self.texts {
            let bytes = Array(text.utf8)
            let whole = PageIndexer.index(bytes, pagination: pagination)
            let expected = Self.bruteForce(bytes, whole)
            #expect((1...whole.count).map { whole.firstLine(of: PageNumber($0)!) } == expected, "\(pagination) \(text.debugDescription)")
            for size in [1, 2, 3, 5, 64] {
                #expect(chunked(bytes, size: size, pagination) == whole, "\(pagination), chunks of \(size): \(text.debugDescription)")
            }
        }
    }

    @Test func rangesCountedInTheirText() {
        let bytes = Array("a\nb\nc\nd\n".utf8)
        let index = PageIndex(ranges: [0..<4, 4..<8]).countingLines(in: bytes)
        #expect(index.firstLine(of: PageNumber(1)!) == 1 && index.firstLine(of: PageNumber(2)!) == 3)
        #expect(PageIndex(ranges: [0..<4]).firstLine(of: PageNumber(1)!) == nil, "not counted")
        #expect(index.firstLine(of: PageNumber(3)!) == nil, "no such page")
    }
}
