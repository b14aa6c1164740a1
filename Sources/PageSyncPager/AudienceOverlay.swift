import PageSyncCore

/// The audience overlay (`a`): the room's members and where each is, hands first, a `WHO` page
/// at a time (so it costs the same in a room of thousands); a member with control lowers the
/// selected hand with `d`. Pure: keys in, the `WHO` or `HAND DOWN` to send out.
package struct AudienceOverlay: Equatable, Sendable {
    /// One member as `WHO` lists it.
    package struct Member: Equatable, Sendable {
        package var name: String
        package var control: Bool
        package var view: String
        package var hand: Bool
        package var you: Bool
    }

    /// The `WHO` offset of the page shown.
    package private(set) var offset = 0
    /// How many members the room has (`OK WHO <total>`).
    package private(set) var total = 0
    /// The offset of the next page, when there is one.
    package private(set) var next: Int?
    /// The page's members: hands first (in the room's order), then browsing, then following.
    package private(set) var members: [Member] = []
    /// The selected row.
    package private(set) var selected = 0
    /// Whether a `WHO` is out.
    package private(set) var loading = true
    /// The offsets of the pages shown before this one (`b` goes back).
    private var previous: [Int] = []

    /// An overlay about to show the first page.
    package init() {}

    /// What a key asks for.
    package enum Outcome: Equatable, Sendable {
        case none
        case close
        /// Ask for the `WHO` page at this offset.
        case who(Int)
        /// Lower this member's hand.
        case lowerHand(String)
    }

    /// Handles a key.
    package mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .char("q"), .char("a"), .escape: return .close
        case .char("j"), .down: selected = min(selected + 1, max(0, members.count - 1))
        case .char("k"), .up: selected = max(0, selected - 1)
        case .char(" "), .char("n"), .pageDown:
            guard let next, !loading else { return .none }
            previous.append(offset)
            loading = true
            return .who(next)
        case .char("b"), .char("p"), .pageUp:
            guard let back = previous.popLast(), !loading else { return .none }
            loading = true
            return .who(back)
        case .char("r"):
            loading = true
            return .who(offset)
        case .char("d"):
            guard members.indices.contains(selected), members[selected].hand else { return .none }
            return .lowerHand(members[selected].name)
        default: break
        }
        return .none
    }

    /// A `WHO` reply arrived: its header and member lines.
    package mutating func whoArrived(_ header: WireLine, lines: [String], offset: Int) {
        loading = false
        self.offset = offset
        total = header.words.dropFirst().first.flatMap { Int($0) } ?? lines.count
        next = header.int("next")
        members = lines.compactMap { line in
            guard let parsed = WireLine(parsing: line) else { return nil }
            return Member(name: parsed.head, control: parsed.yesNo("control") ?? false, view: parsed.fields["view"] ?? "follow",
                          hand: parsed.fields["hand"] == "up", you: parsed.yesNo("you") ?? false)
        }
        let rank: (Member) -> Int = { $0.hand ? 0 : $0.view == "follow" ? 2 : 1 }
        members = members.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
        selected = min(selected, max(0, members.count - 1))
    }

    /// The overlay's rows for a screen of `height` rows: a title, then the members around the
    /// selected one.
    package func rows(summary: String?, height: Int) -> [String] {
        var out = ["Audience" + (summary.map { " · " + $0 } ?? "") + (loading ? " · asking…" : "")]
        let first = max(0, selected - max(0, height - 2))
        for (i, m) in members.enumerated() where i >= first {
            let where_ = m.view == "follow" ? "following" : m.view.hasPrefix("browse:") ? "page " + m.view.dropFirst(7) : m.view
            let line = (i == selected ? "> " : "  ") + (m.hand ? "✋ " : "   ") + Sanitizer.plainText(m.name)
                + (m.control ? " ⚑" : "") + (m.you ? " (you)" : "") + " · " + where_
            out.append(line)
        }
        return out
    }

    /// The status line while the overlay shows.
    package var status: String {
        let shown = members.isEmpty ? "no members" : "members \(offset + 1)-\(offset + members.count) of \(total)"
        return shown + (next != nil ? " · Space more" : "") + (previous.isEmpty ? "" : " · b back")
            + " · j k select · d lowers a hand · r refresh · q close"
    }
}
