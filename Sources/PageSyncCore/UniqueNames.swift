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
    /// are called `others`. Walks `others`: the coordinator uses ``mayRename(to:from:in:)``.
    public static func mayRename(to name: String, from current: String, others: some Sequence<String>) -> Bool {
        mayRename(to: name, from: current, heldByOthers: others.contains(name))
    }

    /// Whether a member of a room now called `current` may be called `name`, where `room`
    /// counts the names of every member of the room, this client included (under `current`).
    /// The same rule as ``mayRename(to:from:others:)``, in one lookup.
    public static func mayRename(to name: String, from current: String, in room: NameCounts) -> Bool {
        mayRename(to: name, from: current, heldByOthers: room.isHeld(name, byOtherThan: current))
    }

    /// Whether a client called `name` may join a room whose members (not counting itself) are called `others`.
    /// Walks `others`: the coordinator uses ``mayJoin(as:into:)``.
    public static func mayJoin(as name: String, others: some Sequence<String>) -> Bool {
        !others.contains(name)
    }

    /// Whether a client called `name` may join a room whose members' names `room` counts
    /// (the client not among them). The same rule as ``mayJoin(as:others:)``, in one lookup.
    public static func mayJoin(as name: String, into room: NameCounts) -> Bool {
        !room.isHeld(name, byOtherThan: nil)
    }

    /// The rule itself: your own name is always yours; guest names are the server's; any
    /// other name is free unless another member holds it (asked only when it matters).
    private static func mayRename(to name: String, from current: String, heldByOthers: @autoclosure () -> Bool) -> Bool {
        if name == current { return true }
        if isGuestName(name) { return false }
        return !heldByOthers()
    }

    /// The message of the `ERR 409` that refuses a name.
    public static let inUseMessage = "name in use"
}
