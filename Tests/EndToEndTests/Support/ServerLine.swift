import PageSyncCore

/// One line the server sent, split into its parts by the client-side parser (PageSyncCore's
/// ``WireLine``, the pager's), so the end-to-end tests check that parser against the real daemon
/// too. The daemon's own encoder is never used to build what a test expects.
///
/// `OK page=2 pages=6 version=1` has kind `OK`, no words and three fields;
/// `ERR 409 version is 5, not 4 page=3 ...` has kind `ERR`, words `["409", "version", ...]`.
struct ServerLine: Sendable, CustomStringConvertible {
    /// The line exactly as received, without its line ending.
    let raw: String
    /// The first word: `HELLO`, `OK`, `ERR`, `PAGE` or `BYE` (a room's or a client's name in
    /// the content of `ROOMS` and `WHO`); empty for a blank line.
    let kind: String
    /// Every later word that is not a `key=value` field, in order.
    let words: [String]
    /// The `key=value` fields (a word whose key before `=` is lowercase letters); a repeated key
    /// keeps its first value.
    let fields: [String: String]
    /// The line as the client-side parser reads it (nil for a blank line).
    let parsed: WireLine?

    init(_ raw: String) {
        self.raw = raw
        parsed = WireLine(parsing: raw)
        kind = parsed?.head ?? ""
        words = parsed?.words ?? []
        fields = parsed?.fields ?? [:]
    }

    /// The field `key`, if present.
    subscript(_ key: String) -> String? { fields[key] }

    /// The field `key` as an integer, if present and numeric.
    func int(_ key: String) -> Int? { parsed?.int(key) }

    /// `page=` as an integer.
    var page: Int? { int("page") }
    /// `pages=` as an integer.
    var pages: Int? { int("pages") }
    /// `version=` as an unsigned 64-bit integer.
    var version: UInt64? { parsed?.version }
    /// For `ERR` lines, the 3-digit code.
    var code: Int? { parsed?.errorCode }

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
        header.parsed?.startsMultilineReply ?? false
    }
}
