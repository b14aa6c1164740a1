/// A whole message from the server: one line, or a multi-line reply with its content
/// lines already un-dot-stuffed.
public enum ServerMessage: Equatable, Sendable {
    /// A line that stands alone: `HELLO`, `PAGE`, `BYE`, or a one-line `OK`/`ERR` reply.
    case line(WireLine)
    /// A multi-line reply (`OK TEXT`, `OK HELP`, `OK ROOMS`, `OK WHO`, `OK INFO`): its header, its content
    /// lines without the final `.` and with one leading `.` removed from each line that has one,
    /// and whether content past ``ReplyAssembler/maxContentBytes`` was dropped.
    case multiline(WireLine, lines: [String], truncated: Bool)
}

/// Groups server lines into messages: a client's reader of PROTOCOL.md's replies. Holds at most
/// ``maxContentBytes`` of one multi-line reply; content past that is dropped and the reply
/// marked truncated, so a server cannot make a client hold more.
public struct ReplyAssembler: Sendable {
    /// The most content bytes (each line's UTF-8 plus one for its LF) kept of one multi-line reply.
    public static let maxContentBytes = 8 << 20

    private var header: WireLine?
    private var lines: [String] = []
    private var bytes = 0
    private var truncated = false

    /// Feeds one line (without its LF; a CR before it is ignored); returns a message when one is
    /// complete. A blank line outside a multi-line reply says nothing and gives nil.
    public mutating func feed(_ raw: String) -> ServerMessage? {
        var line = Substring(raw)
        if line.last == "\r" { line = line.dropLast() }
        if let h = header {
            if line == "." {
                defer { reset() }
                return .multiline(h, lines: lines, truncated: truncated)
            }
            line = DotUnstuffer.unstuff(line) ?? line
            bytes += line.utf8.count + 1
            if bytes > Self.maxContentBytes { truncated = true } else { lines.append(String(line)) }
            return nil
        }
        guard let parsed = WireLine(parsing: String(line)) else { return nil }  // a blank line says nothing
        if parsed.startsMultilineReply {
            header = parsed
            return nil
        }
        return .line(parsed)
    }

    /// Forgets any half-received reply (the connection closed).
    public mutating func reset() {
        header = nil
        lines = []
        bytes = 0
        truncated = false
    }

    /// An assembler between messages.
    public init() {}
}
