/// One line from the server split into kind, plain words and `key=value` fields.
///
/// A field is a word of the form `<lowercase letters>=<value>`; any other word is a plain
/// word (so an error text such as `unknown command "a=b"` stays text).
struct ServerLine: Equatable, Sendable {
    /// `HELLO`, `OK`, `ERR`, `PAGE`, `BYE`, or anything else the server sends.
    var kind: Substring
    /// Words that are not fields, in order (`"pagesync/1"`, `"409"`, `"TEXT"`, message words).
    var words: [Substring]
    /// The `key=value` fields; a later duplicate wins.
    var fields: [Substring: Substring]

    init(parsing line: String) {
        var text = Substring(line)
        while text.last == "\r" || text.last == "\n" || text.last == "\r\n" { text = text.dropLast() }
        let parts = text.split(separator: " ")
        kind = parts.first ?? ""
        words = []
        fields = [:]
        for part in parts.dropFirst() {
            if let eq = part.firstIndex(of: "="), eq != part.startIndex,
               part[..<eq].allSatisfy({ ("a"..."z").contains($0) }) {
                fields[part[..<eq]] = part[part.index(after: eq)...]
            } else {
                words.append(part)
            }
        }
    }

    /// The code of an `ERR` line.
    var errorCode: Int? { kind == "ERR" ? words.first.flatMap { Int($0) } : nil }

    /// The people-text of an `ERR` line (the words after the code), or of a `BYE` line.
    var text: String { words.dropFirst(kind == "ERR" ? 1 : 0).joined(separator: " ") }

    /// Whether this `OK` line starts a multi-line reply (`TEXT`, `HELP`, `ROOMS`, `WHO`).
    var startsMultilineReply: Bool {
        kind == "OK" && ["TEXT", "HELP", "ROOMS", "WHO"].contains(words.first ?? "")
    }

    func int(_ key: Substring) -> Int? { fields[key].flatMap { Int($0) } }
    func version() -> UInt64? { fields["version"].flatMap { UInt64($0) } }
    func yesNo(_ key: Substring) -> Bool? {
        switch fields[key] { case "yes": true; case "no": false; default: nil }
    }
}

/// A whole message from the server: one line, or a multi-line reply with its content
/// lines already un-dot-stuffed.
enum ServerMessage: Equatable, Sendable {
    case line(ServerLine)
    case multiline(ServerLine, lines: [String], truncated: Bool)
}

/// Groups server lines into messages. Holds at most ``maxContentBytes`` of one
/// multi-line reply; content past that is dropped and the reply marked truncated.
struct ReplyAssembler: Sendable {
    static let maxContentBytes = 8 << 20

    private var header: ServerLine?
    private var lines: [String] = []
    private var bytes = 0
    private var truncated = false

    /// Feeds one line (without LF); returns a message when one is complete.
    mutating func feed(_ raw: String) -> ServerMessage? {
        var line = Substring(raw)
        if line.last == "\r" { line = line.dropLast() }
        if let h = header {
            if line == "." {
                defer { reset() }
                return .multiline(h, lines: lines, truncated: truncated)
            }
            if line.first == "." { line = line.dropFirst() }
            bytes += line.utf8.count + 1
            if bytes > Self.maxContentBytes { truncated = true } else { lines.append(String(line)) }
            return nil
        }
        let parsed = ServerLine(parsing: String(line))
        if parsed.startsMultilineReply {
            header = parsed
            return nil
        }
        return .line(parsed)
    }

    /// Forgets any half-received reply (the connection closed).
    mutating func reset() {
        header = nil
        lines = []
        bytes = 0
        truncated = false
    }
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
