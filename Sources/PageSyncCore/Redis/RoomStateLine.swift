/// The line a room's new state is published as on its Redis channel, by the Lua scripts:
/// `<room> <page> <version> <epoch> <doc> <by>`, with `-` for nobody. Room names, client names,
/// doc ids and epochs never contain spaces, so splitting on spaces is exact.
public enum RoomStateLine {
    /// Encodes a state (what the scripts write, for tests and for symmetry).
    public static func encode(_ s: SavedRoom) -> String {
        "\(s.room) \(s.page) \(s.version) \(s.epoch) \(s.doc) \(s.by ?? "-")"
    }

    /// Decodes a published line; nil for anything that is not exactly six valid fields.
    public static func decode(_ text: String) -> SavedRoom? {
        let f = text.split(separator: " ", omittingEmptySubsequences: false)
        guard f.count == 6 else { return nil }
        return RedisRoomFields.saved(room: f[0], page: f[1], version: f[2], by: f[5], doc: f[4], epoch: f[3])
    }
}

/// Turns the fields a script or a hash read returns into a ``SavedRoom``.
public enum RedisRoomFields {
    /// nil when the room name is invalid, the page is not a whole number >= 1, the version not a
    /// whole number, or the epoch not hex. `by` `-` or empty means nobody.
    public static func saved(room: some StringProtocol, page: some StringProtocol, version: some StringProtocol,
                             by: some StringProtocol, doc: some StringProtocol, epoch: some StringProtocol) -> SavedRoom? {
        guard Names.isValid(String(room)), let n = digits(page, as: Int.self), let p = PageNumber(n),
              let v = digits(version, as: UInt64.self), let e = Epoch(hex: epoch), !doc.contains(" ")
        else { return nil }
        let who = by.isEmpty || by == "-" ? nil : String(by)
        return SavedRoom(room: String(room), page: p, version: v, by: who, doc: String(doc), epoch: e)
    }

    private static func digits<T: FixedWidthInteger>(_ s: some StringProtocol, as: T.Type) -> T? {
        guard !s.isEmpty, s.utf8.count <= 20, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return T(String(s))
    }
}
