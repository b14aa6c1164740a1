import PageSyncCore

/// The audience in the pager: it tells the room what its screen shows (`VIEW`, after every
/// change of page or mode), raises and lowers its hand (`A`), brings back a member who wandered
/// off by paging (the room's next page turn; only `D` pins a reader away until `F`), and shows a
/// presenter where the room is (`AUDIENCE`: `12 following · 3 browsing · 1 hand (ann)`).
extension PagerModel {
    /// What this pager's screen shows, as `VIEW` says it.
    var currentView: MemberView {
        switch mode {
        case .following: .follow
        case .detached(let page): .browse(PageNumber(page) ?? .first)
        }
    }

    /// Sends `VIEW` when the screen's view is not what the room was last told.
    mutating func reportView(_ fx: inout [PagerEffect]) {
        guard connection == .connected, room != nil, !outstanding.contains(where: { $0.holdsNavigation }) else { return }
        let view = currentView
        guard view != viewReported else { return }
        viewReported = view
        outstanding.append(.presence)
        fx.append(.send(.view(view)))
    }

    /// `A`: raises or lowers your hand.
    mutating func toggleHand(_ fx: inout [PagerEffect]) {
        guard connection == .connected, room != nil else { message = "not connected: hands need the server"; return }
        handUp.toggle()
        outstanding.append(.presence)
        fx.append(.send(.hand(handUp ? .up : .down)))
        message = handUp ? "your hand is up (A lowers it)" : "your hand is down"
    }

    /// `a`: opens the audience overlay on the room's first `WHO` page.
    mutating func openOverlay(_ fx: inout [PagerEffect]) {
        guard connection == .connected, room != nil else { message = "not connected: the audience needs the server"; return }
        overlay = AudienceOverlay()
        askWho(0, &fx)
    }

    private mutating func askWho(_ offset: Int, _ fx: inout [PagerEffect]) {
        outstanding.append(.who(offset: offset))
        fx.append(.send(.who(offset: offset)))
    }

    /// A key while the overlay shows.
    mutating func overlayKey(_ key: Key, _ fx: inout [PagerEffect]) {
        guard var o = overlay else { return }
        switch o.handle(key) {
        case .none: overlay = o
        case .close: overlay = nil
        case .who(let offset):
            overlay = o
            askWho(offset, &fx)
        case .lowerHand(let name):
            overlay = o
            guard room?.control == true else { message = "lowering hands needs control (start pagesync with --token)"; return }
            outstanding.append(.presence)
            fx.append(.send(.hand(.downFor(name))))
            if let offset = overlay?.offset { askWho(offset, &fx) }
        }
    }

    /// An `AUDIENCE` event: the counts a presenter sees.
    mutating func audienceArrived(_ line: WireLine) {
        guard let following = line.int("following"), let browsing = line.int("browsing"), let hands = line.int("hands") else { return }
        audience = AudienceSummary(following: following, browsing: browsing, hands: hands, first: line.fields["first"])
    }

    /// After the room's page changed by someone else's hand: a reader who wandered off by paging
    /// (not pinned with `D`) follows again, and says so once.
    mutating func wandererReturns(ours: Bool) {
        guard !ours, case .detached = mode, !pinned, let room else { return }
        setView(.following)
        notice("page \(room.page): following the room again (D browses on your own until F)")
    }
}

/// Where a presenter's room is (`AUDIENCE`).
public struct AudienceSummary: Equatable, Sendable {
    /// Members whose screens show the room's page.
    public var following: Int
    /// Members reading another page.
    public var browsing: Int
    /// Raised hands.
    public var hands: Int
    /// Whose hand has been up longest.
    public var first: String?

    /// `12 following · 3 browsing · 1 hand (ann)`.
    public var text: String {
        var s = "\(following) following · \(browsing) browsing"
        if hands > 0 { s += " · \(hands) hand\(hands == 1 ? "" : "s")" + (first.map { " (\(Sanitizer.plainText($0)))" } ?? "") }
        return s
    }
}
