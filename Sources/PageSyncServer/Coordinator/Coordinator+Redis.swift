import Logging
import PageSyncCore
import UV

/// The coordinator's side of an authoritative engine (Redis): navigations are decided by the
/// engine, states from every daemon are applied and fanned out, and presence is shared.
extension Coordinator {
    /// Wires the engine's callbacks and starts the presence heartbeat (from ``start()``).
    func startAuthority() {
        guard let authority else { return }
        authority.onRoomState = { [unowned self] saved in self.applyRoomState(saved) }
        authority.pageCount = { [unowned self] name in self.assumeIsolated { $0.rooms[name]?.document.pageCount ?? Int.max } }
        authority.savedRooms = { [unowned self] in
            self.assumeIsolated { me in me.roomOrder.compactMap { me.rooms[$0] }.map { SavedRoom(room: $0.room.name, state: $0.saved) } }
        }
        let timer = UV.Timer(loop: loop)
        var ticks = 0
        timer.start(afterMilliseconds: PresenceRules.firstTickMilliseconds, repeatMilliseconds: PresenceRules.tickMilliseconds) {
            ticks += 1
            self.sharePresence(heartbeat: PresenceRules.isHeartbeat(tick: ticks))
            self.countOtherDaemonsAudience()
        }
        shared.presenceTimer = timer
        // Redis reachable again after an outage: every room's members at once, not on the next
        // heartbeat (PresenceTracker.lookAtEngine). Whether it is reachable changes only in the
        // loop's callbacks, and a prepare hook runs after each turn's callbacks, so it sees
        // every outage, however short.
        shared.availabilityHook = PrepareHook(loop: loop) { [unowned self] in
            guard let authority = self.authority else { return }
            if self.shared.presence.lookAtEngine(available: authority.isAvailable) { self.sharePresence(heartbeat: true) }
        }
    }

    /// Shutdown: this daemon's members leave every room's presence, and reconnecting stops.
    func stopAuthority() {
        guard let authority else { return }
        shared.presenceTimer?.close()
        shared.presenceTimer = nil
        shared.availabilityHook?.close()
        shared.availabilityHook = nil
        for room in shared.presence.leaving() { authority.publishMembers(room: room, lines: []) }
        authority.shutdown()
    }

    // MARK: - Navigation

    /// A navigation decided by the engine: the reply keeps its place among the client's
    /// replies and is filled in when the engine answers.
    func navigateThroughAuthority(_ authority: any AuthoritativeStateEngine, _ runtime: RoomRuntime,
                                  _ navigation: Navigation, ifVersion: UInt64?, from session: Session) {
        if runtime.room.policy.requiresToken && !session.control {
            stage(session, reporting: .navigationError(.forbidden, room: runtime.room.name))
            return
        }
        let pending = PendingReply()
        stage(session, .pending(pending))
        let room = runtime.room.name
        let id = session.id
        authority.navigate(room: room, navigation: navigation, ifVersion: ifVersion, by: session.name,
                           pageCount: runtime.document.pageCount, wraps: runtime.room.policy.wraps,
                           saved: runtime.saved) { [unowned self] decision in
            self.navigationDecided(decision, room: room, reply: pending, session: id)
        }
    }

    func navigationDecided(_ decision: NavigationDecision, room: String, reply: PendingReply, session id: Int) {
        guard let runtime = rooms[room] else {
            reply.bytes = Self.unavailableLine
            return
        }
        if case .moved = decision { countPageChange(runtime) }
        switch decision {
        case .moved(let saved), .unchanged(let saved):
            applyRoomState(saved)
            reply.bytes = Wire.navigated(localState(saved, runtime)).bytes
        case .refused(let error, let saved):
            applyRoomState(saved)
            let snapshot = RoomSnapshot(name: room, state: localState(saved, runtime), wraps: runtime.room.policy.wraps)
            reply.bytes = Wire.error(error, room: snapshot)
        case .missing, .unavailable:
            reply.bytes = Self.unavailableLine
        case .notSaved(let reason):
            reply.bytes = Self.notSavedLine(reason)
        }
        // Filled here, not staged: counted like a staged ERR line.
        if let bytes = reply.bytes { metrics.countIfError(bytes) }
        if let session = sessions[id] { queueFlush(session) }
    }

    /// `ERR 503 state engine unavailable`.
    static var unavailableLine: [UInt8] {
        Wire.error(ProtocolError(code: .full, message: "state engine unavailable", closesConnection: false))
    }

    /// A state from the engine as this daemon serves it: its own document and page count,
    /// the shared page clamped to them.
    private func localState(_ saved: SavedRoom, _ runtime: RoomRuntime) -> RoomState {
        let count = runtime.document.pageCount
        let page = PageNumber(clamping: saved.page.number, pageCount: count)
        // Another daemon's document may have another page here: its line and mark go with its page.
        let samePage = page == saved.page
        return RoomState(page: page, pageCount: count, version: saved.version, by: saved.by, doc: runtime.document.id,
                         epoch: saved.epoch, line: samePage ? saved.line : 1, mark: samePage ? saved.mark : nil)
    }

    /// A room state from any daemon: applied if newer within its epoch or of another epoch,
    /// then every local member gets it (with the usual per-client conflation).
    func applyRoomState(_ saved: SavedRoom) {
        guard let runtime = rooms[saved.room] else { return }
        let current = runtime.room.state
        guard saved.epoch != current.epoch || saved.version > current.version else { return }
        if saved.doc != runtime.document.id && shared.docWarned[saved.room] != saved.doc {
            shared.docWarned[saved.room] = saved.doc
            logger.warning("room \(saved.room): the shared state is for document \(saved.doc), this daemon has \(runtime.document.id); serving this daemon's text with the shared page clamped to \(runtime.document.pageCount)")
        }
        runtime.room.restore(localState(saved, runtime))
        runtime.saved = runtime.room.state
        runtime.submitted = runtime.room.state
        // Group 0 is always settled: the fan-out pass of this turn writes it.
        delivery.adopted(runtime)
    }

    // MARK: - Presence

    /// This daemon's members of each room, as other daemons list them in WHO.
    private func presenceLines(_ runtime: RoomRuntime) -> [String] {
        runtime.members.values.sorted { $0.id < $1.id }.map { PresenceRules.memberLine(name: $0.name, control: $0.control, view: $0.view, hand: $0.handRaised != nil) }
    }

    /// Sends each room's members when they changed, and all of them on a heartbeat
    /// (``PresenceTracker``'s rules). A room's lines are built only when its
    /// ``RoomRuntime/presenceRevision`` moved since they last were.
    private func sharePresence(heartbeat: Bool) {
        guard let authority, authority.isAvailable else { return }
        for name in roomOrder {
            guard let runtime = rooms[name] else { continue }
            if let lines = shared.presence.due(room: name, revision: runtime.presenceRevision, heartbeat: heartbeat,
                                               lines: { presenceLines(runtime) }) {
                authority.publishMembers(room: name, lines: lines)
            }
        }
    }

    /// Every tick, the presenter rooms with a presenter here count the other daemons' audience
    /// (their presence lines, at most a tick old), so `AUDIENCE` and `STATUS` count every
    /// daemon's members within about half a second of a change; a dead daemon's members leave
    /// the counts when its presence expires, as they leave `WHO`.
    private func countOtherDaemonsAudience() {
        guard let authority, authority.isAvailable else { return forgetOtherDaemonsAudience(except: []) }
        let names = roomOrder.filter { name in
            guard let r = rooms[name], r.room.policy.requiresToken else { return false }
            return r.members.values.contains { $0.control }
        }
        // Rooms not counted now keep no other daemons' numbers from before (stale ones).
        forgetOtherDaemonsAudience(except: Set(names))
        guard !names.isEmpty else { return }
        authority.otherMembers(rooms: names) { [unowned self] others in
            self.assumeIsolated { me in
                guard let others else { return }
                for (name, lines) in zip(names, others) {
                    guard let runtime = me.rooms[name] else { continue }
                    let counts = AudienceCounts.counting(presenceLines: lines)
                    guard counts != runtime.remoteAudience else { continue }
                    runtime.remoteAudience = counts
                    me.audienceChanged(runtime)
                }
            }
        }
    }

    /// Rooms other than `counted` count only this daemon's members (no presenter here to tell,
    /// or Redis unreachable): their other daemons' counts from an earlier tick are dropped.
    private func forgetOtherDaemonsAudience(except counted: Set<String>) {
        for (name, runtime) in rooms where !counted.contains(name) && runtime.remoteAudience != AudienceCounts() {
            runtime.remoteAudience = AudienceCounts()
            audienceChanged(runtime)
        }
    }

    /// WHO across daemons: this daemon's members first, then the others'. Returns false when
    /// the engine cannot be asked (WHO is then answered from local members).
    func whoAcrossDaemons(_ runtime: RoomRuntime, for session: Session, offset: Int) -> Bool {
        guard let authority, authority.isAvailable else { return false }
        let local = runtime.membersInWhoOrder.map { m in
            (line: PresenceRules.memberLine(name: m.name, control: m.control, view: m.view, hand: m.handRaised != nil), isYou: m === session)
        }
        let pending = PendingReply()
        stage(session, .pending(pending))
        let id = session.id
        authority.otherMembers(rooms: [runtime.room.name]) { [unowned self] others in
            self.assumeIsolated { me in
                let all = PresenceRules.whoLines(local: local, others: others?.first ?? [])
                // Bounded like a local WHO: one page, `WHO <offset>` for the next.
                let page = WhoPage(total: all.count, offset: offset, pageSize: me.config.whoPageSize)
                pending.bytes = Wire.who(page, total: all.count, lines: all[page.range])
                if let session = me.sessions[id] { me.queueFlush(session) }
            }
        }
        return true
    }

    /// ROOMS across daemons: `clients=` counts every daemon's members. False when the engine
    /// cannot be asked.
    func roomsAcrossDaemons(for session: Session) -> Bool {
        guard let authority, authority.isAvailable else { return false }
        let pending = PendingReply()
        stage(session, .pending(pending))
        let id = session.id
        let names = roomOrder
        authority.otherMembers(rooms: names) { [unowned self] others in
            self.assumeIsolated { me in
                pending.bytes = me.roomsReply(otherClients: PresenceRules.otherClientCounts(rooms: names, replies: others))
                if let session = me.sessions[id] { me.queueFlush(session) }
            }
        }
        return true
    }
}

/// What the coordinator keeps for an authoritative engine.
final class AuthoritySide {
    var presenceTimer: UV.Timer?
    /// Watches whether the engine can be reached, after every loop turn.
    var availabilityHook: PrepareHook?
    /// What this daemon last sent about its members.
    var presence = PresenceTracker()
    /// The foreign doc id last warned about per room (logged once per value).
    var docWarned: [String: String] = [:]
    init() {}
}
