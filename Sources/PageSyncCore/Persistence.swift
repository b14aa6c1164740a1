/// The part of a room's state saved to disk so that versions survive restarts.
public struct PersistedRoom: Equatable, Sendable {
    /// The page the room was on.
    public var page: PageNumber
    /// The room's version.
    public var version: UInt64
    /// Who turned the page last; nil when nobody had.
    public var by: String?
    /// The document content id when saved; nil when unknown.
    public var doc: String?

    /// Creates a persisted state.
    public init(page: PageNumber, version: UInt64, by: String?, doc: String?) {
        self.page = page
        self.version = version
        self.by = by
        self.doc = doc
    }
}

/// The text format of a saved room:
/// `"pagesync-state 1\npage=3\nversion=17\nby=ann\ndoc=5f1c3a2b\n"`.
/// `by` and `doc` lines are left out when nil.
public enum PersistedRoomCodec {
    /// The first line of every saved state.
    public static let header = "pagesync-state 1"

    /// Encodes a room. CR and LF inside `by` or `doc` (never produced by the server) are
    /// replaced by `-` so the result always decodes.
    public static func encode(_ r: PersistedRoom) -> [UInt8] {
        var text = "\(header)\npage=\(r.page)\nversion=\(r.version)\n"
        if let by = r.by { text += "by=\(clean(by))\n" }
        if let doc = r.doc { text += "doc=\(clean(doc))\n" }
        return Array(text.utf8)
    }

    /// Decodes a saved room, or returns nil for anything that is not exactly a version-1
    /// state: wrong or missing header, a line without `=` or without its LF (truncated),
    /// a missing or invalid `page` (ASCII digits, >= 1) or `version` (ASCII digits, fits
    /// UInt64), a duplicate key, or invalid UTF-8. Unknown keys are ignored; missing or
    /// empty `by`/`doc` decode as nil.
    public static func decode(_ bytes: some Collection<UInt8>) -> PersistedRoom? {
        guard let text = String(validating: Array(bytes), as: UTF8.self), text.utf8.last == 0x0A else { return nil }
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { Substring($0) }
        lines.removeLast() // the empty piece after the final LF
        guard lines.first == Substring(header) else { return nil }
        var values: [Substring: Substring] = [:]
        for line in lines.dropFirst() {
            guard let eq = line.firstIndex(of: "="), eq != line.startIndex else { return nil }
            let key = line[..<eq]
            guard values[key] == nil else { return nil }
            values[key] = line[line.index(after: eq)...]
        }
        guard let pageText = values["page"], let pageNumber = digits(pageText, as: Int.self),
              let page = PageNumber(pageNumber),
              let versionText = values["version"], let version = digits(versionText, as: UInt64.self)
        else { return nil }
        let by = values["by"].flatMap { $0.isEmpty ? nil : String($0) }
        let doc = values["doc"].flatMap { $0.isEmpty ? nil : String($0) }
        return PersistedRoom(page: page, version: version, by: by, doc: doc)
    }

    private static func clean(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? "-" : $0 })
    }

    private static func digits<T: FixedWidthInteger>(_ s: Substring, as: T.Type) -> T? {
        guard !s.isEmpty, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return T(s)
    }
}
