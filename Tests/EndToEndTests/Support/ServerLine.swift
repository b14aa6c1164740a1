/// One line the server sent, split into its parts. Written independently of PageSyncCore so the
/// end-to-end tests check the wire format against PROTOCOL.md, not against the daemon's own encoder.
///
/// `OK page=2 pages=6 version=1` has kind `OK`, no words and three fields;
/// `ERR 409 version is 5, not 4 page=3 ...` has kind `ERR`, words `["409", "version", ...]`.
struct ServerLine: Sendable, CustomStringConvertible {
    /// The line exactly as received, without its line ending.
    let raw: String
    /// The first word: `HELLO`, `OK`, `ERR`, `PAGE` or `BYE`.
    let kind: String
    /// Every later word that is not a `key=value` field, in order.
    let words: [String]
    /// The `key=value` fields; a repeated key keeps its last value.
    let fields: [String: String]

    /// Splits `raw` on spaces. A word is a field when it has a non-empty key of letters before `=`.
    init(_ raw: String) {
        self.raw = raw
        var parts = raw.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        kind = parts.isEmpty ? "" : parts.removeFirst()
        var words: [String] = []
        var fields: [String: String] = [:]
        for part in parts {
            if let eq = part.firstIndex(of: "="), eq != part.startIndex,
               part[..<eq].allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) {
                fields[String(part[..<eq])] = String(part[part.index(after: eq)...])
            } else {
                words.append(part)
            }
        }
        self.words = words
        self.fields = fields
    }

    /// The field `key`, if present.
    subscript(_ key: String) -> String? { fields[key] }

    /// The field `key` as an integer, if present and numeric.
    func int(_ key: String) -> Int? { fields[key].flatMap { Int($0) } }

    /// `page=` as an integer.
    var page: Int? { int("page") }
    /// `pages=` as an integer.
    var pages: Int? { int("pages") }
    /// `version=` as an unsigned 64-bit integer.
    var version: UInt64? { fields["version"].flatMap { UInt64($0) } }
    /// For `ERR` lines, the 3-digit code.
    var code: Int? { kind == "ERR" ? words.first.flatMap { Int($0) } : nil }

    var description: String { raw }
}

/// A complete reply: its first line and, for a multi-line reply, the content lines already
/// unstuffed (one leading `.` removed from lines that start with `.`), without the final `.`.
struct Reply: Sendable, CustomStringConvertible {
    /// The `OK ...` or `ERR ...` line.
    let header: ServerLine
    /// Content lines of a multi-line reply; empty for one-line replies.
    let lines: [String]

    var description: String {
        ([header.raw] + lines.map { "  | " + $0 }).joined(separator: "\n")
    }

    /// Whether a reply starting with `header` is multi-line (`OK TEXT`, `OK HELP`, `OK ROOMS`, `OK WHO`).
    static func isMultiLine(_ header: ServerLine) -> Bool {
        header.kind == "OK" && ["TEXT", "HELP", "ROOMS", "WHO"].contains(header.words.first ?? "")
    }
}
