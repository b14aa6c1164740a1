import PageSyncCore

/// A whole message from the server: one line, or a multi-line reply with its content
/// lines already un-dot-stuffed.
package enum ServerMessage: Equatable, Sendable {
    case line(WireLine)
    case multiline(WireLine, lines: [String], truncated: Bool)
}

/// Groups server lines into messages. Holds at most ``maxContentBytes`` of one
/// multi-line reply; content past that is dropped and the reply marked truncated.
package struct ReplyAssembler: Sendable {
    package static let maxContentBytes = 8 << 20

    private var header: WireLine?
    private var lines: [String] = []
    private var bytes = 0
    private var truncated = false

    /// Feeds one line (without LF); returns a message when one is complete.
    package mutating func feed(_ raw: String) -> ServerMessage? {
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
    package mutating func reset() {
        header = nil
        lines = []
        bytes = 0
        truncated = false
    }

    /// Every property at its initial value.
    package init() {}
}

/// Reconnection delays: about 100 ms, doubling up to 5 s, with jitter.
public enum ReconnectBackoff {
    /// The first delay, in milliseconds.
    public static let initialMilliseconds = 100
    /// The longest delay, in milliseconds.
    public static let maximumMilliseconds = 5_000

    /// The delay before reconnection attempt `attempt` (1 for the first): a value in
    /// `base/2 ... base`, where `base` is 100 ms doubled per attempt and capped at 5 s;
    /// `unitRandom` in `0..<1` picks where in that range.
    public static func delay(attempt: Int, unitRandom: Double) -> Int {
        let exponent = min(max(0, attempt - 1), 16)
        let base = min(maximumMilliseconds, initialMilliseconds << exponent)
        let r = min(max(0, unitRandom), 1)
        return base / 2 + Int(Double(base - base / 2) * r)
    }
}
