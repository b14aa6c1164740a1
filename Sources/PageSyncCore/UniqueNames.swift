/// The rule that keeps client names unique within a room.
///
/// - A name held by another member of the room cannot be taken (`NAME`), and a client cannot
///   `JOIN` a room where another member already has its name.
/// - Names of the form `guest-<digits>` belong to the server, which gives each connection its
///   own; `NAME` cannot take one (except the one you already have). So guest names never collide.
/// - Names compare exactly (they are case-sensitive, as everywhere else).
public enum UniqueNames {
    /// Whether `name` is of the server's `guest-<digits>` form.
    public static func isGuestName(_ name: String) -> Bool {
        let digits = name.utf8.dropFirst(6)
        return name.hasPrefix("guest-") && !digits.isEmpty && digits.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// Whether a client now called `current` may be called `name` in a room whose other members
    /// are called `others`.
    public static func mayRename(to name: String, from current: String, others: some Sequence<String>) -> Bool {
        if name == current { return true }
        if isGuestName(name) { return false }
        return !others.contains(name)
    }

    /// Whether a client called `name` may join a room whose members (not counting itself) are called `others`.
    public static func mayJoin(as name: String, others: some Sequence<String>) -> Bool {
        !others.contains(name)
    }

    /// The message of the `ERR 409` that refuses a name.
    public static let inUseMessage = "name in use"
}
