import PageSyncCore

/// Where a page-turning press starts from.
package enum NavigationBase: Equatable, Sendable { case current, first, last, page(Int) }

/// What the presses not yet sent add up to: a base and a net offset from it.
package struct NavigationIntent: Equatable, Sendable {
    package var base: NavigationBase
    package var offset: Int
    package var pull = false

    /// Each stored property as given (the memberwise initializer, visible to the package's tests).
    package init(base: NavigationBase, offset: Int, pull: Bool = false) {
        self.base = base
        self.offset = offset
        self.pull = pull
    }
}

/// The one navigation command in flight, as sent.
package struct NavigationRequest: Equatable, Sendable {
    package var intent: NavigationIntent
    package var command: Command
    package var basePage: Int
    package var target: Int
}

/// The pure rules of page-turning requests: how presses combine, where they lead, and the
/// command that asks the server for it (see ``PagerModel`` for when they are sent).
package enum NavigationRequests {
    /// `later` pressed after `earlier` (not sent yet): a relative press adds to what is pending,
    /// an absolute one (or a pull) replaces it.
    package static func combine(_ earlier: NavigationIntent?, _ later: NavigationIntent) -> NavigationIntent {
        guard let earlier, later.base == .current, !later.pull else { return later }
        return NavigationIntent(base: earlier.base, offset: earlier.offset + later.offset, pull: earlier.pull)
    }

    /// The page an intent leads to from `current`, or nil if it leads nowhere new.
    package static func resolve(_ i: NavigationIntent, current: Int, room: RoomView) -> Int? {
        let n = max(1, room.pageCount)
        let base = switch i.base {
        case .current: current
        case .first: 1
        case .last: n
        case .page(let p): p
        }
        var target = base
        if i.offset != 0 {
            // Wrapping rooms go round; others stop at their ends (PageNumber does the arithmetic).
            let from = PageNumber(clamping: base, pageCount: n)
            target = (room.wraps ? from.advanced(by: i.offset, pageCount: n, wrapping: true)
                : PageNumber(clamping: base + i.offset, pageCount: n))?.number ?? base
        }
        return target == current ? nil : target
    }

    /// Why a relative press goes nowhere at an end of a room that stops there (nil otherwise).
    package static func edgeMessage(_ i: NavigationIntent, current: Int, room: RoomView) -> String? {
        guard i.base == .current, !room.wraps else { return nil }
        if i.offset > 0 && current >= room.pageCount { return "already on the last page" }
        if i.offset < 0 && current <= 1 { return "already on the first page" }
        return nil
    }

    /// The conditional command that asks for `intent` reaching `target` (>= 1) at room version `version`.
    package static func command(for intent: NavigationIntent, target: Int, version: UInt64) -> Command {
        let navigation: Navigation
        switch (intent.base, intent.offset) {
        case (.current, 1): navigation = .next
        case (.current, -1): navigation = .previous
        case (.first, 0): navigation = .first
        case (.last, 0): navigation = .last
        default: navigation = .goto(PageNumber(target) ?? .first)
        }
        return .navigate(navigation, ifVersion: version)
    }
}
