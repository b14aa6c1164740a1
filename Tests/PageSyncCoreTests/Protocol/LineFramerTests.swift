import Testing
import PageSyncCore

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Drains every available frame.
private func drain(_ f: inout LineFramer) -> [LineFramer.Frame] {
    var out: [LineFramer.Frame] = []
    while let frame = f.next() { out.append(frame) }
    return out
}

private func line(_ s: String) -> LineFramer.Frame { .line(bytes(s)[...]) }

@Suite struct LineFramerTests {
    @Test func splitsOnLFAndDropsCRBeforeLF() {
        var f = LineFramer(maxLineLength: 100)
        f.append(contentsOf: bytes("one\ntwo\r\nthree\r\n\n\r\n"))
        #expect(drain(&f) == [line("one"), line("two"), line("three"), line(""), line("")])
        #expect(f.bufferedByteCount == 0)
    }

    @Test func keepsCRNotBeforeLF() {
        var f = LineFramer(maxLineLength: 100)
        f.append(contentsOf: bytes("a\rb\n\r\r\n"))
        #expect(drain(&f) == [line("a\rb"), line("\r")])
    }

    @Test func incompleteLineWaits() {
        var f = LineFramer(maxLineLength: 100)
        f.append(contentsOf: bytes("partial"))
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 7)
        f.append(contentsOf: bytes(" line\nnext"))
        #expect(f.next() == line("partial line"))
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 4)
    }

    @Test func byteByByte() {
        var f = LineFramer(maxLineLength: 100)
        var frames: [LineFramer.Frame] = []
        for b in bytes("hello world\r\nsecond\nthird\r\n") {
            f.append(contentsOf: [b])
            frames += drain(&f)
        }
        #expect(frames == [line("hello world"), line("second"), line("third")])
        #expect(f.bufferedByteCount == 0)
    }

    @Test func crlfSplitAcrossAppends() {
        var f = LineFramer(maxLineLength: 100)
        f.append(contentsOf: bytes("abc\r"))
        #expect(f.next() == nil)
        f.append(contentsOf: bytes("\ndef\r"))
        #expect(f.next() == line("abc"))
        #expect(f.next() == nil)
        f.append(contentsOf: bytes("\n"))
        #expect(f.next() == line("def"))
        #expect(f.next() == nil)
    }

    @Test func unsafeRawBufferAppend() {
        var f = LineFramer(maxLineLength: 100)
        bytes("x\ny\n").withUnsafeBytes { f.append($0) }
        #expect(drain(&f) == [line("x"), line("y")])
    }

    @Test func exactLimitIsAccepted() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: bytes("12345678"))
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 8)
        f.append(contentsOf: bytes("\n"))
        #expect(f.next() == line("12345678"))
    }

    @Test func exactLimitInOneAppend() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: bytes("12345678\n"))
        #expect(drain(&f) == [line("12345678")])
    }

    @Test func limitPlusOneIsTooLongImmediately() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: bytes("123456789"))
        #expect(f.next() == .tooLong)
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 0)
        f.append(contentsOf: bytes("more bytes of the same line"))
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 0)
        f.append(contentsOf: bytes("tail\nok\n"))
        #expect(drain(&f) == [line("ok")])
    }

    @Test func limitPlusOneWithLFInSameAppend() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: bytes("123456789\nok\n"))
        #expect(drain(&f) == [.tooLong, line("ok")])
    }

    @Test func crCountsTowardTheLimit() {
        var f = LineFramer(maxLineLength: 4)
        f.append(contentsOf: bytes("abcd\r\nabc\r\n"))
        #expect(drain(&f) == [.tooLong, line("abc")])
    }

    @Test func tooLongYieldedOnceForAHugeLineFedByteByByte() {
        var f = LineFramer(maxLineLength: 16)
        var frames: [LineFramer.Frame] = []
        for _ in 0..<10_000 {
            f.append(contentsOf: [UInt8(ascii: "x")])
            frames += drain(&f)
            #expect(f.bufferedByteCount <= 16)
        }
        f.append(contentsOf: bytes("\nafter\n"))
        frames += drain(&f)
        #expect(frames == [.tooLong, line("after")])
    }

    @Test func tooLongLineThenTooLongLineAgain() {
        var f = LineFramer(maxLineLength: 3)
        f.append(contentsOf: bytes("aaaaa"))
        #expect(drain(&f) == [.tooLong])
        f.append(contentsOf: bytes("aa\nbbbbbbb"))
        #expect(drain(&f) == [.tooLong])
        f.append(contentsOf: bytes("b\nc\n"))
        #expect(drain(&f) == [line("c")])
    }

    @Test func linesBeforeAndAfterTooLongInOneAppend() {
        var f = LineFramer(maxLineLength: 5)
        f.append(contentsOf: bytes("ab\n0123456789\ncd\nxyzxyzxyz"))
        #expect(drain(&f) == [line("ab"), .tooLong, line("cd"), .tooLong])
        #expect(f.bufferedByteCount == 0)
        f.append(contentsOf: bytes("zz\nend\n"))
        #expect(drain(&f) == [line("end")])
    }

    @Test func manyLinesInOneAppend() {
        var f = LineFramer(maxLineLength: 10)
        let text = (0..<1000).map { "l\($0)" }.joined(separator: "\n") + "\n"
        f.append(contentsOf: bytes(text))
        let frames = drain(&f)
        #expect(frames.count == 1000)
        #expect(frames.first == line("l0"))
        #expect(frames.last == line("l999"))
        #expect(f.bufferedByteCount == 0)
    }

    @Test func bufferedByteCountNeverExceedsLimitForIncompleteLine() {
        var f = LineFramer(maxLineLength: 10)
        for chunk in ["12345", "67890", "1", "23", "\n", "abc", "defghijklmnop", "q\n", "z"] {
            f.append(contentsOf: bytes(chunk))
            _ = drain(&f)
            #expect(f.bufferedByteCount <= 10)
        }
        #expect(f.bufferedByteCount == 1)
    }

    @Test func longStreamOfTinyAppendsCompacts() {
        var f = LineFramer(maxLineLength: 64)
        var count = 0
        let message = bytes("a fairly ordinary command line\n")
        for _ in 0..<2000 {
            for b in message {
                f.append(contentsOf: [b])
                while let frame = f.next() {
                    #expect(frame == .line(Array(message.dropLast())[...]))
                    count += 1
                }
            }
        }
        #expect(count == 2000)
        #expect(f.bufferedByteCount == 0)
    }

    @Test func manyLinesAppendedBeforeReadingAreAllDelivered() {
        var f = LineFramer(maxLineLength: 8)
        for i in 0..<5000 { f.append(contentsOf: bytes("n\(i % 100)\n")) }
        var n = 0
        while let frame = f.next() {
            #expect(frame == line("n\(n % 100)"))
            n += 1
        }
        #expect(n == 5000)
    }

    @Test func emptyAppendIsHarmless() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: [UInt8]())
        [UInt8]().withUnsafeBytes { f.append($0) }
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 0)
    }

    /// A line is a slice of the framer's buffer, and compaction waits for the next call: a
    /// caller that keeps the slice while the framer goes on still holds the same bytes.
    @Test func aLineKeptWhileTheFramerGoesOnKeepsItsBytes() {
        var f = LineFramer(maxLineLength: 100)
        f.append(contentsOf: bytes("first\nsecond\nthi"))
        guard case .line(let kept)? = f.next() else {
            Issue.record("no first line")
            return
        }
        #expect(Array(kept) == bytes("first"))
        #expect(f.next() == line("second"))
        #expect(f.next() == nil)
        #expect(f.bufferedByteCount == 3, "only the partial line is held")
        f.append(contentsOf: bytes("rd\n" + String(repeating: "x", count: 50) + "\n"))
        #expect(drain(&f) == [line("third"), line(String(repeating: "x", count: 50))])
        #expect(Array(kept) == bytes("first"))
        #expect(f.bufferedByteCount == 0)
    }
    /// A connection that sent one large read (the daemon reads 64 KiB at a time) and then went
    /// quiet must not keep that read's buffer: 1,000 such connections held 64 MiB of the daemon.
    @Test("a long line without LF, then quiet: the buffer is given back, not kept at the burst's size")
    func aDiscardedBurstDoesNotKeepItsBuffer() {
        var f = LineFramer(maxLineLength: 4096)
        f.append(contentsOf: [UInt8](repeating: 0x78, count: 65_000))
        #expect(f.next() == .tooLong)
        #expect(f.next() == nil)
        #expect(f.bufferCapacity <= LineFramer.retainedCapacity, "capacity \(f.bufferCapacity) after discarding")
        f.append(contentsOf: bytes("tail of the long line\nPING\n"))
        #expect(drain(&f) == [line("PING")])
    }

    @Test("a burst of lines ending in half a line: once the lines are taken, only the half line's bytes are held")
    func aConsumedBurstKeepsOnlyItsPartialLine() {
        var f = LineFramer(maxLineLength: 4096)
        f.append(contentsOf: bytes(String(repeating: "PING\n", count: 13_000) + "NEX"))
        var lines = 0
        while let frame = f.next() {
            #expect(frame == line("PING"))
            lines += 1
        }
        #expect(lines == 13_000)
        #expect(f.bufferedByteCount == 3)
        #expect(f.bufferCapacity <= LineFramer.retainedCapacity, "capacity \(f.bufferCapacity) for 3 bytes")
        f.append(contentsOf: bytes("T\n"))
        #expect(drain(&f) == [line("NEXT")])
        #expect(f.bufferCapacity <= LineFramer.retainedCapacity)
    }
}
