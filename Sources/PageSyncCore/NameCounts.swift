/// How many members of one room hold each name: a multiset of names, so that "is this name
/// taken by someone else here?" is one hash lookup instead of a walk over the room.
///
/// The coordinator keeps one per room and changes it exactly where a member enters, leaves
/// or is renamed; ``UniqueNames`` answers `NAME` and `JOIN` from it. Names compare exactly
/// (case-sensitive), as ``UniqueNames`` requires.
///
/// Guest names (``UniqueNames/isGuestName(_:)``) are not counted: the server gives each
/// connection its own and no one else may take one, so they never collide, and a room of
/// thousands of idle guests would otherwise hold an entry for each (about 40 bytes a member).
public struct NameCounts: Equatable, Sendable {
    /// Each held name and how many hold it (always at least 1: a name nobody holds has no entry).
    private var counts: [String: Int] = [:]

    /// No names.
    public init() {}

    /// The names of `names`, each counted as often as it occurs.
    public init(_ names: some Sequence<String>) {
        for name in names { add(name) }
    }

    /// How many hold `name` (0 when nobody does, and for a guest name).
    public func count(of name: String) -> Int {
        counts[name] ?? 0
    }

    /// How many different names are held.
    public var distinctCount: Int { counts.count }

    /// Whether nobody holds any name.
    public var isEmpty: Bool { counts.isEmpty }

    /// Counts one more holder of `name` (a guest name is not counted).
    public mutating func add(_ name: String) {
        guard !UniqueNames.isGuestName(name) else { return }
        counts[name, default: 0] += 1
    }

    /// Counts one holder of `name` fewer; the name is free once its last holder is removed.
    /// Removing a name nobody holds changes nothing.
    public mutating func remove(_ name: String) {
        guard !UniqueNames.isGuestName(name), let count = counts[name] else { return }
        counts[name] = count > 1 ? count - 1 : nil
    }

    /// One holder of `old` now holds `new` instead (nothing changes when they are equal).
    /// Like ``remove(_:)``, an `old` nobody holds is not removed; `new` is counted regardless.
    public mutating func rename(_ old: String, to new: String) {
        guard old != new else { return }
        remove(old)
        add(new)
    }

    /// Whether `name` is held by someone other than the asker, whose own name is `own` and
    /// is counted here (nil when the asker is not counted here, for instance before it joins).
    /// The asker holding `name` itself does not make it taken; a second holder does.
    public func isHeld(_ name: String, byOtherThan own: String?) -> Bool {
        count(of: name) > (name == own ? 1 : 0)
    }
}
