/// Where a piece of a page (`TEXT <n> FROM <offset>`) starts and where the next one does,
/// and whether it ends inside a line longer than `max-text`.
public struct TextPiece: Equatable, Sendable {
    /// The byte offset in the page this piece starts at.
    public var from: Int
    /// The byte offset the next piece starts at.
    public var next: Int
    /// Whether the piece ends inside one line (a line longer than `max-text`).
    public var splitLine: Bool

    /// Creates a piece description.
    public init(from: Int, next: Int, splitLine: Bool) {
        self.from = from
        self.next = next
        self.splitLine = splitLine
    }
}

/// The reply to `TEXT`, encoded a piece at a time, so a large page is sent as the socket
/// drains instead of being encoded whole before anything leaves.
///
/// The header (`OK TEXT page= pages= doc= bytes= lines= truncated=`) is ready at once (counting
/// lines is one pass for LF bytes); the body (lines split at LF, a CR before the LF dropped,
/// invalid UTF-8 replaced by U+FFFD, dot-stuffed) is produced by ``nextChunk(atLeast:)``, then
/// the closing `.` line. ``Wire/text(page:pageCount:doc:bytes:pageByteCount:truncated:)`` is
/// every piece at once.
public struct TextReplyEncoder: Sendable {
    private let bytes: [UInt8]
    private var position = 0
    private var header: [UInt8]?
    private var closed = false

    /// An encoder for the text of `page`: `bytes` as sent (possibly cut at `max-text`),
    /// `pageByteCount` the page's size in the file.
    /// With `piece`, the header also carries `from= next= split=`. `reply` is the header's second
    /// word: `TEXT`, or `NOTES` for a page's speaker notes (the same form and limits).
    /// `firstLine`: the file line the page starts on (`firstline=`), when known.
    public init(page: PageNumber, pageCount: Int, doc: String, bytes: [UInt8], pageByteCount: Int, truncated: Bool,
                piece: TextPiece? = nil, reply: String = "TEXT", firstLine: Int? = nil) {
        self.bytes = bytes
        var lines = 0
        var lastLF = -1
        bytes.withUnsafeBufferPointer { b in
            for i in b.indices where b[i] == 0x0A {
                lines += 1
                lastLF = i
            }
        }
        if lastLF != bytes.count - 1 && !bytes.isEmpty { lines += 1 }  // a last line without LF
        var text = "OK \(reply) page=\(page) pages=\(pageCount) doc=\(doc) bytes=\(pageByteCount) lines=\(lines) truncated=\(Wire.yesNo(truncated))"
        if let piece { text += " from=\(piece.from) next=\(piece.next) split=\(Wire.yesNo(piece.splitLine))" }
        if let firstLine { text += " firstline=\(firstLine)" }
        header = Wire.line(text)
    }

    /// Whether every piece has been produced.
    public var isFinished: Bool { closed }

    /// The next piece: the header first, then whole lines until at least `atLeast` bytes (or the
    /// end), then the closing `.` line. Nil once finished.
    public mutating func nextChunk(atLeast: Int) -> [UInt8]? {
        if closed { return nil }
        var out = header ?? []
        header = nil
        out.reserveCapacity(out.count + min(atLeast, bytes.count - position) + 64)
        let n = bytes.count
        while position < n && out.count < atLeast {
            var end = position
            while end < n && bytes[end] != 0x0A { end += 1 }
            var contentEnd = end
            if end < n && contentEnd > position && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            let slice = bytes[position..<contentEnd]
            if String(validating: slice, as: UTF8.self) != nil {
                Wire.appendStuffed(slice, to: &out)
            } else {
                Wire.appendStuffed(String(decoding: slice, as: UTF8.self).utf8, to: &out)
            }
            position = end + 1
        }
        if position >= n {
            out.append(contentsOf: ".\n".utf8)
            closed = true
        }
        return out
    }
}
