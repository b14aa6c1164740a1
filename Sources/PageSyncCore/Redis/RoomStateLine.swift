/// The line a room's new state is published as on its Redis channel, by the Lua scripts:
/// `<room> <page> <version> <epoch> <doc> <by>`, with `-` for nobody. Room names, client names,
/// doc ids and epochs never contain spaces, so splitting on spaces is exact.
public enum RoomStateLine {
    /// Encodes a state (what the scripts write, for tests and for symmetry).
    public static func encode(_ s: SavedRoom) -> String {
        "\(s.room) \(s.page) \(s.version) \(s.epoch) \(s.doc) \(s.by ?? "-") \(s.line) \(RedisRoomFields.markText(s.mark))"
    }

    /// Decodes a published line; nil for anything that is not exactly six valid fields.
    public static func decode(_ text: String) -> SavedRoom? {
        let f = text.split(separator: " ", omittingEmptySubsequences: false)
        guard f.count == 6 || f.count == 8 else { return nil }
        return RedisRoomFields.saved(room: f[0], page: f[1], version: f[2], by: f[5], doc: f[4], epoch: f[3],
                                     line: f.count == 8 ? f[6] : "1", mark: f.count == 8 ? f[7] : "-")
    }
}

/// Turns the fields a script or a hash read returns into a ``SavedRoom``.
public enum RedisRoomFields {
    /// nil when the room name is invalid, the page is not a whole number >= 1, the version not a
    /// whole number, or the epoch not hex. `by` `-` or empty means nobody.
    public static func saved(room: some StringProtocol, page: some StringProtocol, version: some StringProtocol,
                             by: some StringProtocol, doc: some StringProtocol, epoch: some StringProtocol,
                             line: some StringProtocol = "1", mark: some StringProtocol = "-") -> SavedRoom? {
        guard Names.isValid(String(room)), let n = digits(page, as: Int.self), let p = PageNumber(n),
              let v = digits(version, as: UInt64.self), let e = Epoch(hex: epoch), !doc.contains(" "),
              let top = digits(line, as: Int.self), top >= 1, let marked = self.mark(mark)
        else { return nil }
        let who = by.isEmpty || by == "-" ? nil : String(by)
        return SavedRoom(room: String(room), page: p, version: v, by: who, doc: String(doc), epoch: e, line: top, mark: marked)
    }

    /// A room's mark as the Redis hash and the published lines hold it: `<first>-<last>`, or `-`.
    public static func markText(_ mark: LineRange?) -> String {
        mark.map { "\($0.first)-\($0.last)" } ?? "-"
    }

    /// ``markText(_:)`` read back: `.some(nil)` for `-`, nil when it is neither.
    private static func mark(_ text: some StringProtocol) -> LineRange?? {
        if text == "-" { return .some(nil) }
        let ends = text.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let first = digits(ends[0], as: Int.self), let last = digits(ends[1], as: Int.self),
              let range = LineRange(first: first, last: last) else { return nil }
        return .some(range)
    }

    private static func digits<T: FixedWidthInteger>(_ s: some StringProtocol, as: T.Type) -> T? {
        guard !s.isEmpty, s.utf8.count <= 20, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return T(String(s))
    }
}
