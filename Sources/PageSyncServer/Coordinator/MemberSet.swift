/// The sessions in a room: found by id, and walked as one dense array.
///
/// The fan-out visits every member of a room for every change. A dictionary's values are
/// spread over sparse storage, and walking them retains each one; here the members sit in
/// one contiguous array (a removal moves the last member into the hole), with an index from
/// id to position beside it. The order of ``elements`` is therefore not join order: sort by
/// id for that (ids grow with each connection).
package struct MemberSet<Member: AnyObject> {
    /// The members, densely packed, in no particular order.
    package private(set) var elements: ContiguousArray<Member> = []
    /// The id of each member in ``elements``, at the same position.
    private var ids: ContiguousArray<Int> = []
    /// Where each id's member sits in ``elements``.
    private var positions: [Int: Int] = [:]
    /// Grows by one with each member added, replaced or removed, and never changes otherwise:
    /// equal revisions mean the same members.
    package private(set) var revision: UInt64 = 0

    /// An empty set.
    package init() {}

    /// How many members there are.
    package var count: Int { elements.count }

    /// Whether there are no members.
    package var isEmpty: Bool { elements.isEmpty }

    /// Every member's id, in the order of ``elements``.
    package var keys: ContiguousArray<Int> { ids }

    /// The members, in no particular order (the same as ``elements``).
    package var values: ContiguousArray<Member> { elements }

    /// The member with `id`; setting nil removes it, setting a member adds or replaces it.
    package subscript(id: Int) -> Member? {
        get { positions[id].map { elements[$0] } }
        set {
            if let member = newValue {
                insert(member, id: id)
            } else {
                remove(id: id)
            }
        }
    }

    private mutating func insert(_ member: Member, id: Int) {
        revision &+= 1
        if let position = positions[id] {
            elements[position] = member
            return
        }
        positions[id] = elements.count
        elements.append(member)
        ids.append(id)
    }

    private mutating func remove(id: Int) {
        guard let position = positions.removeValue(forKey: id) else { return }
        revision &+= 1
        let last = elements.count - 1
        if position != last {
            elements[position] = elements[last]
            ids[position] = ids[last]
            positions[ids[position]] = position
        }
        elements.removeLast()
        ids.removeLast()
    }
}
