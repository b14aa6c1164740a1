import TestSupport
import Testing
import PageSyncCore


private func randomBytes(_ rng: inout SeededGenerator, alphabet: [UInt8], maxLength: Int) -> [UInt8] {
    let n = Int.random(in: 0...maxLength, using: &rng)
    return (0..<n).map { _ in alphabet.randomElement(using: &rng)! }
}

/// Feeds `bytes` in random-sized chunks.
private func randomChunks(_ bytes: [UInt8], _ rng: inout SeededGenerator, _ body: (UnsafeRawBufferPointer) -> Void) {
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + Int.random(in: 1...8, using: &rng))
        bytes[i..<end].withUnsafeBytes(body)
        i = end
    }
}

// MARK: - Straightforward reference implementations of the rules in SPEC.md

/// Lines as (start, end-after-LF-or-EOF, content range without LF).
private func referenceLines(_ b: [UInt8]) -> [(start: Int, end: Int, content: Range<Int>)] {
    var out: [(Int, Int, Range<Int>)] = []
    var start = 0
    for i in b.indices where b[i] == 0x0A {
        out.append((start, i + 1, start..<i))
        start = i + 1
    }
    if start < b.count { out.append((start, b.count, start..<b.count)) }
    return out.map { (start: $0.0, end: $0.1, content: $0.2) }
}

private func dropEmptyFinal(_ pages: [Range<Int>]) -> [Range<Int>] {
    var pages = pages
    if pages.count > 1, pages.last!.isEmpty { pages.removeLast() }
    return pages.isEmpty ? [0..<0] : pages
}

private func referenceFormFeed(_ b: [UInt8]) -> [Range<Int>] {
    var pages: [Range<Int>] = []
    var start = 0
    var i = 0
    while i < b.count {
        if b[i] == 0x0C {
            pages.append(start..<i)
            start = i + 1
            if start < b.count && b[start] == 0x0A {
                start += 1
            } else if start + 1 < b.count && b[start] == 0x0D && b[start + 1] == 0x0A {
                start += 2
            }
            i = start
        } else {
            i += 1
        }
    }
    pages.append(start..<b.count)
    return dropEmptyFinal(pages)
}

private func referenceSeparator(_ b: [UInt8], _ sep: [UInt8]) -> [Range<Int>] {
    var pages: [Range<Int>] = []
    var start = 0
    for line in referenceLines(b) {
        var content = Array(b[line.content])
        if content.last == 0x0D { content.removeLast() }
        while let l = content.last, l == 0x20 || l == 0x09 { content.removeLast() }
        if content == sep {
            pages.append(start..<line.start)
            start = line.end
        }
    }
    pages.append(start..<b.count)
    return dropEmptyFinal(pages)
}

private func referenceLinesPerPage(_ b: [UInt8], _ n: Int) -> [Range<Int>] {
    let lines = referenceLines(b)
    var pages: [Range<Int>] = []
    var i = 0
    while i < lines.count {
        let group = lines[i..<min(lines.count, i + n)]
        pages.append(group.first!.start..<group.last!.end)
        i += n
    }
    return pages.isEmpty ? [0..<0] : pages
}

private func referenceFrames(_ b: [UInt8], max: Int) -> [LineFramer.Frame] {
    var out: [LineFramer.Frame] = []
    var start = 0
    for i in b.indices where b[i] == 0x0A {
        var line = Array(b[start..<i])
        if line.count > max {
            out.append(.tooLong)
        } else {
            if line.last == 0x0D { line.removeLast() }
            out.append(.line(line[...]))
        }
        start = i + 1
    }
    if b.count - start > max { out.append(.tooLong) }
    return out
}

@Suite struct ReferenceTests {
    static let alphabet: [UInt8] = Array("a-\n\r\u{0C} \t".utf8)

    @Test func pageIndexerMatchesReference() {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<3000 {
            let bytes = randomBytes(&rng, alphabet: Self.alphabet, maxLength: 40)
            let separator = [Array("-".utf8), Array("--".utf8), Array("a-".utf8)].randomElement(using: &rng)!
            let n = Int.random(in: 1...4, using: &rng)
            let cases: [(Pagination, [Range<Int>])] = [
                (.formFeed, referenceFormFeed(bytes)),
                (.separator(String(decoding: separator, as: UTF8.self)), referenceSeparator(bytes, separator)),
                (.lines(n), referenceLinesPerPage(bytes, n)),
            ]
            for (pagination, expected) in cases {
                let whole = PageIndexer.index(bytes, pagination: pagination)
                #expect(whole.ranges == expected, "\(pagination) \(bytes)")
                var indexer = PageIndexer(pagination: pagination)
                randomChunks(bytes, &rng) { indexer.consume($0) }
                #expect(indexer.finish() == whole, "\(pagination) \(bytes)")
            }
        }
    }

    /// The framer against the reference, fed in random chunks. `takingLate`: as the server does
    /// when a client's turn budget runs out, it takes at most two frames after an append (with
    /// the framer's compaction still due after a line) and appends more before taking again;
    /// otherwise it takes every frame after each append, and never holds more than a line.
    @Test(arguments: [false, true])
    func lineFramerMatchesReference(takingLate: Bool) {
        var rng = SeededGenerator(seed: takingLate ? 11 : 7)
        var takes = SeededGenerator(seed: 12)  // how many frames to take after each append
        for _ in 0..<3000 {
            let bytes = randomBytes(&rng, alphabet: Array("ab\n\r".utf8), maxLength: 60)
            let max = Int.random(in: 1...6, using: &rng)
            var framer = LineFramer(maxLineLength: max)
            var frames: [LineFramer.Frame] = []
            randomChunks(bytes, &rng) { chunk in
                framer.append(chunk)
                let limit = takingLate ? Int.random(in: 0...2, using: &takes) : Int.max
                var taken = 0
                while taken < limit, let f = framer.next() {
                    frames.append(f)
                    taken += 1
                }
                if !takingLate { #expect(framer.bufferedByteCount <= max) }
            }
            while let f = framer.next() { frames.append(f) }
            #expect(framer.bufferedByteCount <= max)
            #expect(frames == referenceFrames(bytes, max: max), "\(max) \(bytes)")
        }
    }

    @Test func parserNeverFailsWithoutAOneLineMessage() {
        var rng = SeededGenerator(seed: 99)
        let words = ["next", "GOTO", "if", "IF", "3", "0", "-1", "text", "join", "name", "ping", "auth", "status",
                     "99999999999999999999", " ", "\t", "\u{0}", "\u{FF}", "\r", "a/b", "HTTP/1.1", "GET", "Host:", "é"]
        for _ in 0..<5000 {
            let count = Int.random(in: 0...5, using: &rng)
            var line: [UInt8] = []
            for _ in 0..<count {
                line += Array(words.randomElement(using: &rng)!.utf8)
                if Bool.random(using: &rng) { line.append(0x20) }
            }
            if Int.random(in: 0..<10, using: &rng) == 0 { line.append(UInt8.random(in: 0...255, using: &rng)) }
            switch CommandParser.parse(line) {
            case .success:
                break
            case .failure(let e):
                #expect(e.code == .malformed)
                #expect(!e.message.isEmpty)
                #expect(!e.message.contains("\n"))
                #expect(Wire.error(e).filter { $0 == 0x0A }.count == 1)
            }
        }
    }
}
