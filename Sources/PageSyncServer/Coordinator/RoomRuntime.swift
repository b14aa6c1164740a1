import PageSyncCore

/// A room at run time: its state machine, its configuration, its document, the sessions in
/// it, and where its state stands on the way to disk. `room`, `members`, `pageLines` and the
/// fields ``TurnDelivery`` reaches (``DeliveryRoom``) are not checked for exclusivity at run
/// time (see the note in TurnDelivery.swift).
final class RoomRuntime: DeliveryRoom {
    @exclusivity(unchecked) var room: Room
    var config: RoomConfig {
        didSet { fileName = config.document.wireFileName }
    }
    /// `config.document.wireFileName`, worked out once per document rather than per line.
    private(set) var fileName: String
    var document: Document
    /// The sessions in the room, by id (see ``MemberSet``). Changed only through ``admit(_:)`` and
    /// ``release(_:)``, so that ``names`` always counts exactly these sessions' names.
    @exclusivity(unchecked) private(set) var members = MemberSet<Session>()
    /// The names of ``members``, each counted once per member holding it: `NAME` and `JOIN`
    /// ask it whether a name is taken instead of walking the room. Changed only together with
    /// ``members`` or a member's name (``rename(_:to:)``).
    private(set) var names = NameCounts()
    /// Grows with each change of a member's name or control flag (``Session`` reports them).
    private(set) var memberDetailsRevision: UInt64 = 0
    /// Counts re-index requests: only the newest one's result is applied.
    var reindexGeneration = 0
    /// Set when a change that re-indexed the room was undone (``TurnDelivery/fail(after:errorLine:members:)``): the
    /// next re-index applies the document again even though its text is the one served.
    var reindexUndone = false
    /// The state as of the last settled group: what replies rendered on release report.
    @exclusivity(unchecked) var saved: RoomState
    /// The state as of the last group handed to the engine.
    @exclusivity(unchecked) var submitted: RoomState
    /// Whether the room changed in the loop turn now forming a group.
    @exclusivity(unchecked) var changedThisTurn = false
    /// Navigations that moved the room, made by this daemon's clients (`INFO rooms`, `/metrics`).
    var changes: UInt64 = 0
    /// State lines not yet offered to every member (see ``FanoutLog``). The room is in the
    /// delivery's `fanoutRooms` exactly while this is not empty.
    @exclusivity(unchecked) var fanout = FanoutLog()
    /// The room's `PAGE` line with its fixed parts encoded once (see ``pageLine()``).
    @exclusivity(unchecked) private var pageLines: PageLineTemplate

    init(room: Room, config: RoomConfig, document: Document) {
        self.room = room
        self.config = config
        self.fileName = config.document.wireFileName
        self.document = document
        self.saved = room.state
        self.submitted = room.state
        self.pageLines = PageLineTemplate(room: room.name)
    }

    /// Makes `session` a member, counting its name (a session already here changes nothing).
    func admit(_ session: Session) {
        guard members[session.id] == nil else { return }
        members[session.id] = session
        names.add(session.name)
        if isAudience(session) { localAudience.count(session.view, hand: session.handRaised != nil) }
    }

    /// Removes `session` from the members, freeing its name here once nobody else holds it
    /// (a session not here changes nothing).
    func release(_ session: Session) {
        guard members[session.id] != nil else { return }
        members[session.id] = nil
        names.remove(session.name)
        if isAudience(session) { localAudience.count(session.view, hand: session.handRaised != nil, sign: -1) }
    }

    /// Whether `session` is counted in ``audience``: in a presenter room, the members without
    /// control (the presenters are not their own audience); in an open room, everyone.
    func isAudience(_ session: Session) -> Bool { !(session.control && room.policy.requiresToken) }

    /// `session`, a member, gained or lost control (``Session/control``): in a presenter room it
    /// leaves or joins the audience's counts.
    func controlChanged(_ session: Session, was: Bool) {
        guard members[session.id] != nil, room.policy.requiresToken, was != session.control else { return }
        localAudience.count(session.view, hand: session.handRaised != nil, sign: session.control ? -1 : 1)
    }

    /// How many of this daemon's members follow, browse and have a hand up (kept with ``members``).
    private(set) var localAudience = AudienceCounts()
    /// The same for other daemons' members (with `--redis`), from their presence lines.
    var remoteAudience = AudienceCounts()
    /// Every daemon's members: what `STATUS` and `AUDIENCE` say.
    var audience: AudienceCounts { localAudience + remoteAudience }
    /// When this room's next `AUDIENCE` event goes out.
    var audienceCoalescer = AudienceCoalescer()

    /// `session`, a member, now shows `view`.
    func setView(_ session: Session, _ view: MemberView) {
        if members[session.id] != nil, isAudience(session) { localAudience.moved(from: session.view, to: view) }
        session.view = view
        memberDetailsChanged()
    }

    /// `session`'s hand goes up (at `order`) or down (nil).
    func setHand(_ session: Session, raisedAt order: UInt64?) {
        guard (session.handRaised != nil) != (order != nil) else { return }
        if members[session.id] != nil, isAudience(session) { localAudience.hand(order != nil) }
        session.handRaised = order
        memberDetailsChanged()
    }

    /// The members as `WHO` lists them: raised hands first (the longest up first), then in join
    /// order, so that a hand is on the first page however large the room.
    var membersInWhoOrder: [Session] {
        members.values.sorted { ($0.handRaised ?? .max, $0.id) < ($1.handRaised ?? .max, $1.id) }
    }

    /// The member whose hand has been up longest, if any hand is.
    var firstHand: String? {
        guard audience.hands > 0 else { return nil }  // (a hand up on another daemon has no time here)
        return members.values.filter { $0.handRaised != nil }.min { $0.handRaised! < $1.handRaised! }?.name
    }

    /// Renames `session`, a member, to `name`, and counts the new name in place of the old.
    /// (The caller has checked ``UniqueNames/mayRename(to:from:in:)`` against ``names``.)
    func rename(_ session: Session, to name: String) {
        if members[session.id] != nil { names.rename(session.name, to: name) }
        session.name = name
    }

    /// Moves whenever the room's presence lines (its members' names and control flags) may
    /// have changed, and only then: the sum of two counters that only grow, the members'
    /// (``MemberSet/revision``) and their details' (``memberDetailsRevision``). For
    /// ``PresenceTracker``.
    var presenceRevision: UInt64 { members.revision &+ memberDetailsRevision }

    /// A member's name or control flag changed.
    func memberDetailsChanged() {
        memberDetailsRevision &+= 1
    }

    /// The room's name.
    var name: String { room.name }

    /// The room's state now.
    var state: RoomState { room.state }

    /// Puts the room back to `state` (``Room/restore(_:)``).
    func restore(_ state: RoomState) {
        room.restore(state)
    }

    /// The line count of ``pageLines(_:)``'s last answer, for the document and page it counted.
    /// Keyed by the document's content id (``Document/id``), never by the object's address: a
    /// reloaded document's new object may reuse a freed one's address.
    private var lineCountCache: (document: String, page: PageNumber, lines: Int)?

    /// How many lines the room's current page has (``Document/lineCount(of:)``), counted once per
    /// document and page: `LINE` and `MARK` ask it on every scroll.
    func currentPageLineCount() throws(DocumentError) -> Int {
        let key = (document.id, room.state.page)
        if let cached = lineCountCache, cached.document == key.0, cached.page == key.1 { return cached.lines }
        let lines = try document.lineCount(of: key.1)
        lineCountCache = (key.0, key.1, lines)
        return lines
    }

    /// The room's `PAGE` line for its state now (``Wire/event(room:_:)``'s bytes).
    func pageLine() -> ByteLine {
        pageLines.line(room.state)
    }

    /// The `OK` of a navigation that left the room in its state now (``Wire/navigated(_:)``),
    /// from the three numbers alone: reading `room.state` whole would copy it.
    var navigatedReply: NavigatedReply {
        NavigatedReply(page: room.state.page, pageCount: room.state.pageCount, version: room.state.version,
                       line: room.state.line, mark: room.state.mark)
    }

    var snapshot: RoomSnapshot {
        RoomSnapshot(name: room.name, state: room.state, wraps: room.policy.wraps, file: fileName, title: document.wireTitle)
    }

    /// The room as of its last saved state.
    var savedSnapshot: RoomSnapshot {
        RoomSnapshot(name: room.name, state: saved, wraps: room.policy.wraps, file: fileName, title: document.wireTitle)
    }
}
