import Testing
import PageSyncCore

/// The text of every page of `text`, indexed in one chunk.
private func pages(_ text: String, _ pagination: Pagination) -> [String] {
    let bytes = Array(text.utf8)
    let index = PageIndexer.index(bytes, pagination: pagination)
    return (1...index.count).map { n in
        String(decoding: bytes[index.byteRange(of: PageNumber(n)!)], as: UTF8.self)
    }
}

/// Indexes `bytes` fed in chunks of `size`.
func chunked(_ bytes: [UInt8], size: Int, _ pagination: Pagination) -> PageIndex {
    var indexer = PageIndexer(pagination: pagination)
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + size)
        bytes[i..<end].withUnsafeBytes { indexer.consume($0) }
        i = end
    }
    return indexer.finish()
}

@Suite struct PaginationParsingTests {
    @Test(arguments: [
        ("formfeed", Pagination.formFeed),
        ("FormFeed", .formFeed),
        ("separator:---", .separator("---")),
        ("separator:# page", .separator("# page")),
        ("Separator:a:b", .separator("a:b")),
        ("lines:1", .lines(1)),
        ("lines:24", .lines(24)),
        ("LINES:007", .lines(7)),
        ("markdown", .markdown),
        ("Markdown", .markdown),
        ("headings", .headings),
        ("HEADINGS", .headings),
    ])
    func parses(_ text: String, _ expected: Pagination) {
        #expect(Pagination(parsing: text) == expected)
    }

    @Test(arguments: ["", "form feed", "formfeed:", "separator:", "separator:   ", "separator", "lines:0",
                      "lines:", "lines:-1", "lines:+2", "lines:2x", "lines: 2", "lines:99999999999999999999",
                      "pages:3", ":3", "separator:a\nb", "separator:a\r", "markdown:", "heading", "headings:2"])
    func rejects(_ text: String) {
        #expect(Pagination(parsing: text) == nil)
    }

    @Test(arguments: [Pagination.formFeed, .separator("---"), .separator("a: b"), .lines(40), .markdown, .headings])
    func descriptionRoundTrips(_ p: Pagination) {
        #expect(Pagination(parsing: p.description) == p)
    }

    @Test func defaultsByExtension() {
        #expect(Pagination.defaultFor(path: "/a/slides.md") == .markdown)
        #expect(Pagination.defaultFor(path: "talk.Markdown") == .markdown)
        #expect(Pagination.isMarkdown(path: "/a/README.MD"))
        #expect(!Pagination.isMarkdown(path: "/a/README.txt"))
        #expect(Pagination.defaultFor(path: "/a/notes.txt") == .formFeed)
        #expect(Pagination.defaultFor(path: "/a.md/notes") == .formFeed)
        #expect(Pagination.defaultFor(path: "/a/.md") == .formFeed)
        #expect(Pagination.defaultFor(path: "md") == .formFeed)
        #expect(Pagination.defaultFor(path: "x.mdx") == .formFeed)
    }

    @Test func descriptions() {
        #expect(Pagination.formFeed.description == "formfeed")
        #expect(Pagination.separator("---").description == "separator:---")
        #expect(Pagination.lines(3).description == "lines:3")
    }
}

@Suite struct PageIndexTests {
    @Test func rangesInit() {
        let index = PageIndex(ranges: [0..<3, 4..<9])
        #expect(index.count == 2)
        #expect(index.byteRange(of: .first) == 0..<3)
        #expect(index.byteRange(of: PageNumber(2)!) == 4..<9)
        #expect(index.ranges == [0..<3, 4..<9])
        let empty = PageIndex(ranges: [Range<Int>]())
        #expect(empty.count == 1)
        #expect(empty.byteRange(of: .first) == 0..<0)
        #expect(PageIndex(ranges: [0..<3, 4..<9]) == index)
        #expect(PageIndex(ranges: [0..<3]) != index)
    }
}

@Suite struct FormFeedTests {
    @Test func basic() {
        #expect(pages("one\u{0C}two\u{0C}three", .formFeed) == ["one", "two", "three"])
    }

    @Test func newlineAfterFormFeedBelongsToTheBreak() {
        #expect(pages("one\n\u{0C}\ntwo\n\u{0C}\r\nthree\n", .formFeed) == ["one\n", "two\n", "three\n"])
    }

    @Test func onlyOneNewlineIsSkipped() {
        #expect(pages("a\u{0C}\n\nb", .formFeed) == ["a", "\nb"])
        #expect(pages("a\u{0C}\r\n\r\nb", .formFeed) == ["a", "\r\nb"])
    }

    @Test func lonelyCRAfterFormFeedStays() {
        #expect(pages("a\u{0C}\rb", .formFeed) == ["a", "\rb"])
        #expect(pages("a\u{0C}\r\rb", .formFeed) == ["a", "\r\rb"])
    }

    @Test func consecutiveFormFeedsMakeEmptyPages() {
        #expect(pages("a\u{0C}\u{0C}b", .formFeed) == ["a", "", "b"])
        #expect(pages("a\u{0C}\n\u{0C}\nb", .formFeed) == ["a", "", "b"])
        #expect(pages("a\u{0C}\u{0C}\u{0C}\nb\u{0C}", .formFeed) == ["a", "", "", "b"])
    }

    @Test func leadingFormFeedMakesAnEmptyFirstPage() {
        #expect(pages("\u{0C}a", .formFeed) == ["", "a"])
    }

    @Test func trailingFormFeedIsDropped() {
        #expect(pages("a\u{0C}b\u{0C}", .formFeed) == ["a", "b"])
        #expect(pages("a\u{0C}b\u{0C}\n", .formFeed) == ["a", "b"])
        #expect(pages("a\u{0C}b\u{0C}\r\n", .formFeed) == ["a", "b"])
        #expect(pages("a\u{0C}b\u{0C}\r", .formFeed) == ["a", "b", "\r"])  // a lone CR is content
        #expect(pages("a\u{0C}b\u{0C}\n\n", .formFeed) == ["a", "b", "\n"])
    }

    @Test func emptyFileIsOneEmptyPage() {
        #expect(pages("", .formFeed) == [""])
        #expect(pages("\u{0C}", .formFeed) == [""])
        #expect(pages("\u{0C}\n", .formFeed) == [""])
    }

    @Test func noFormFeedIsOnePage() {
        #expect(pages("just text\nno newline at end", .formFeed) == ["just text\nno newline at end"])
    }

    @Test func byteRangesAreExact() {
        let index = PageIndexer.index(Array("ab\u{0C}\ncd\u{0C}e".utf8), pagination: .formFeed)
        #expect(index.ranges == [0..<2, 4..<6, 7..<8])
    }
}

@Suite struct SeparatorTests {
    @Test func basic() {
        #expect(pages("one\n---\ntwo\n---\nthree\n", .separator("---")) == ["one\n", "two\n", "three\n"])
    }

    @Test func trailingBlanksAndCRLFOnTheSeparatorLine() {
        #expect(pages("one\n---  \ntwo\n--- \t\r\nthree\r\n---\r\nfour", .separator("---")) == ["one\n", "two\n", "three\r\n", "four"])
    }

    @Test func separatorMustMatchTheWholeLine() {
        #expect(pages("a\n----\nb\n --- \nc\n-- -\nd\n---x\n", .separator("---")) == ["a\n----\nb\n --- \nc\n-- -\nd\n---x\n"])
        #expect(pages("a\n---\rx\nb", .separator("---")) == ["a\n---\rx\nb"])
        #expect(pages("a\n--\nb", .separator("---")) == ["a\n--\nb"])
    }

    @Test func separatorWithTrailingBlanksInTheConfiguration() {
        #expect(pages("a\n---\nb", .separator("---  ")) == ["a\n", "b"])
    }

    @Test func separatorAtStart() {
        #expect(pages("---\none\n---\ntwo", .separator("---")) == ["", "one\n", "two"])
    }

    @Test func separatorAtEnd() {
        #expect(pages("one\n---\n", .separator("---")) == ["one\n"])
        #expect(pages("one\n---", .separator("---")) == ["one\n"])
        #expect(pages("one\n--- \r", .separator("---")) == ["one\n"])
        #expect(pages("one\n---\r\n", .separator("---")) == ["one\n"])
    }

    @Test func consecutiveSeparatorsMakeEmptyPages() {
        #expect(pages("a\n---\n---\nb\n", .separator("---")) == ["a\n", "", "b\n"])
    }

    @Test func emptyFileAndOnlySeparator() {
        #expect(pages("", .separator("---")) == [""])
        #expect(pages("---\n", .separator("---")) == [""])
        #expect(pages("---", .separator("---")) == [""])
    }

    @Test func noTrailingNewline() {
        #expect(pages("a\n---\nlast line", .separator("---")) == ["a\n", "last line"])
    }

    @Test func multiByteSeparator() {
        #expect(pages("α\n§ page §\nβ", .separator("§ page §")) == ["α\n", "β"])
    }

    @Test func byteRangesExcludeTheSeparatorLine() {
        let index = PageIndexer.index(Array("ab\n---\ncd".utf8), pagination: .separator("---"))
        #expect(index.ranges == [0..<3, 7..<9])
    }
}

@Suite struct LinesTests {
    @Test func exactMultiple() {
        #expect(pages("1\n2\n3\n4\n", .lines(2)) == ["1\n2\n", "3\n4\n"])
    }

    @Test func partialLastPage() {
        #expect(pages("1\n2\n3\n4\n5\n", .lines(2)) == ["1\n2\n", "3\n4\n", "5\n"])
    }

    @Test func noTrailingNewline() {
        #expect(pages("1\n2\n3", .lines(2)) == ["1\n2\n", "3"])
        #expect(pages("1\n2\n3\n4", .lines(2)) == ["1\n2\n", "3\n4"])
    }

    @Test func onePerPageWithEmptyLines() {
        #expect(pages("a\n\n\nb\n", .lines(1)) == ["a\n", "\n", "\n", "b\n"])
    }

    @Test func fewerLinesThanAPage() {
        #expect(pages("a\nb\n", .lines(10)) == ["a\nb\n"])
    }

    @Test func emptyFile() {
        #expect(pages("", .lines(3)) == [""])
    }

    @Test func crlfLines() {
        #expect(pages("a\r\nb\r\nc\r\n", .lines(2)) == ["a\r\nb\r\n", "c\r\n"])
    }

    @Test func nonPositiveCountIsTreatedAsOne() {
        #expect(pages("a\nb\n", .lines(0)) == ["a\n", "b\n"])
    }
}

@Suite struct ChunkingTests {
    static let samples: [(String, Pagination)] = [
        ("one\n\u{0C}\ntwo\n\u{0C}\r\nthree\u{0C}\u{0C}x\u{0C}\ry\u{0C}\r\r\nz\u{0C}\r\n", .formFeed),
        ("\u{0C}\u{0C}\n\u{0C}\r\n", .formFeed),
        ("a\u{0C}\r", .formFeed),
        ("---\none\n--- \t\r\ntwo\n----\n---\n---\r\nthree\r\n---", .separator("---")),
        ("a\n---\rx\n---\r\n--\n--- x\n---  ", .separator("---")),
        ("x\n§§\ny\n§§\r\n", .separator("§§")),
        ("1\n2\r\n3\n\n5\n6\n7", .lines(2)),
        ("1\n2\n3\n4\n5\n6\n", .lines(3)),
        ("\n\n\n\n", .lines(1)),
        ("HEAD(1)   Manual   HEAD(1)\n\nNAME\n       head\n\nSEE ALSO\r\n  x\n\nB\u{8}BU\u{8}UG\u{8}GS\n\n\u{1B}[1mEND\u{1B}[0m", .headings),
        ("---\na\n---\n", .markdown),
    ]

    @Test(arguments: 0..<samples.count)
    func everyChunkSizeGivesTheSameIndex(_ sample: Int) {
        let (text, pagination) = Self.samples[sample]
        let bytes = Array(text.utf8)
        let whole = PageIndexer.index(bytes, pagination: pagination)
        for size in 1...max(1, bytes.count) {
            #expect(chunked(bytes, size: size, pagination) == whole, "chunk size \(size)")
        }
    }

    @Test func irregularChunks() {
        var text = ""
        for i in 0..<200 { text += "line \(i)\n" + (i % 7 == 0 ? "---\r\n" : "") + (i % 11 == 0 ? "\u{0C}\r\n" : "") }
        let bytes = Array(text.utf8)
        for pagination in [Pagination.formFeed, .separator("---"), .lines(5), .headings] {
            let whole = PageIndexer.index(bytes, pagination: pagination)
            var indexer = PageIndexer(pagination: pagination)
            var i = 0
            var step = 1
            while i < bytes.count {
                let end = min(bytes.count, i + step)
                bytes[i..<end].withUnsafeBytes { indexer.consume($0) }
                i = end
                step = step % 13 + 1
            }
            #expect(indexer.finish() == whole)
        }
    }

    @Test func emptyChunksAreHarmless() {
        var indexer = PageIndexer(pagination: .formFeed)
        [UInt8]().withUnsafeBytes { indexer.consume($0) }
        Array("a\u{0C}b".utf8).withUnsafeBytes { indexer.consume($0) }
        [UInt8]().withUnsafeBytes { indexer.consume($0) }
        #expect(indexer.finish().ranges == [0..<1, 2..<3])
    }

    @Test func nonContiguousCollection() {
        let bytes = Array("a\u{0C}b".utf8)
        let index = PageIndexer.index(bytes.lazy.map { $0 }, pagination: .formFeed)
        #expect(index.ranges == [0..<1, 2..<3])
    }

    @Test func rangesCoverEveryByteOutsideBreaks() {
        // Pages are in order, do not overlap and stay inside the file.
        let bytes = Array(String(repeating: "text\n\u{0C}\nmore\n---\n", count: 50).utf8)
        for pagination in [Pagination.formFeed, .separator("---"), .lines(3)] {
            let ranges = PageIndexer.index(bytes, pagination: pagination).ranges
            var previousEnd = 0
            for r in ranges {
                #expect(r.lowerBound >= previousEnd)
                #expect(r.upperBound <= bytes.count)
                previousEnd = r.upperBound
            }
        }
    }
}

/// `--split headings` on plain text: man-page section headings.
@Suite struct ManSectionTests {
    @Test("what a heading is: capitals at column 0, two letters or more, at most 60, no lowercase")
    func headingRule() {
        func kind(_ s: String) -> ManHeadingProbe.Kind { ManHeadingProbe.kind(of: Array(s.utf8)) }
        for heading in ["NAME", "SEE ALSO", "SHELL BUILTIN COMMANDS", "EXIT STATUS", "C++ SUPPORT", "PARAMETERS\r",
                        "N\u{8}NA\u{8}AM\u{8}ME\u{8}E", "_\u{8}N_\u{8}O", "\u{1B}[1mNAME\u{1B}[0m", "ÜBERSICHT", "BUGS  ",
                        "AUTHORS (2024)", String(repeating: "A", count: 60)] {
            #expect(kind(heading) == .heading, "\(heading)")
        }
        for text in ["Name", "  NAME", "\tNAME", "A", "I am", "NAME:x y z lowercase", "1 NAME", "-NAME", "NAME\tX", "NAME*",
                     String(repeating: "A", count: 61), "\u{1B}]0;x\u{7}NAME", "BASH(1)    General Commands Manual    BASH(1)"] {
            #expect(kind(text) == .text, "\(text)")
        }
        for blank in ["", " ", "\t \r"] { #expect(kind(blank) == .blank) }
    }

    @Test("man's output splits at each section after the first; the header line stays with NAME")
    func manPage() {
        let man = """
            BASH(1)                     General Commands Manual                    BASH(1)

            NAME
                   bash - GNU Bourne-Again SHell

            SYNOPSIS
                   bash [options]
            NOT A HEADING

            SHELL GRAMMAR
                   Simple Commands

            BASH 5.2                          2022 September 19                         BASH(1)
            """
        let texts = pages(man, .headings)
        #expect(texts.count == 3, "\(texts)")
        #expect(texts[0].hasPrefix("BASH(1)") && texts[0].hasSuffix("SHell\n\n"))
        #expect(texts[1].hasPrefix("SYNOPSIS\n") && texts[1].contains("NOT A HEADING"))
        #expect(texts[2].hasPrefix("SHELL GRAMMAR\n") && texts[2].hasSuffix("BASH(1)"))
    }

    @Test("no headings: one page; one heading: one page; a heading on the last line without an LF starts a page")
    func edges() {
        #expect(pages("just some prose\nand more\n", .headings).count == 1)
        #expect(pages("NAME\n  x\n", .headings).count == 1)
        #expect(pages("", .headings) == [""])
        #expect(pages("NAME\n  x\n\nBUGS", .headings) == ["NAME\n  x\n\n", "BUGS"])
    }

    @Test("the scanner counts lines and headings however the text is chunked")
    func counts() {
        let bytes = Array("NAME\n x\n\nBUGS\n y\n\nNOTES\nz".utf8)
        for size in 1...bytes.count {
            var scanner = ManSectionScanner()
            var starts: [Int] = []
            var i = 0
            while i < bytes.count {
                let end = min(bytes.count, i + size)
                bytes[i..<end].withUnsafeBytes { starts += scanner.consume($0) }
                i = end
            }
            #expect(scanner.finish() == nil)
            #expect(starts == [9, 18], "chunk size \(size)")
            #expect(scanner.lineCount == 8 && scanner.headingCount == 3, "chunk size \(size)")
        }
    }
}
