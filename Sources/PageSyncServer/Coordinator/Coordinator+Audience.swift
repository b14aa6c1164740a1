import PageSyncCore
import UV

/// The audience: what each member's screen shows (`VIEW`), raised hands (`HAND`), and the
/// coalesced `AUDIENCE` event that tells members with control where their room is. All of it
/// is presence: it never bumps a room's version, is never saved, and reaches no member without
/// control (it costs them nothing).
extension Coordinator {
    /// `VIEW FOLLOW`, `VIEW BROWSE <page>`.
    func view(_ view: MemberView, from session: Session) {
        let runtime = session.runtime
        if case .browse(let page) = view, page.number > runtime.document.pageCount {
            stage(session, .bytes(Wire.error(ProtocolError(
                code: .pastEnd, message: "no page \(page.number): this document has \(runtime.document.pageCount) pages",
                closesConnection: false))))
            return
        }
        let changed = session.view != view
        runtime.setView(session, view)
        stage(session, .bytes(Wire.viewed(view)))
        if changed { audienceChanged(runtime) }
    }

    /// `HAND UP`, `HAND DOWN`, and with control `HAND DOWN <name>`, `HAND DOWN ALL`.
    func hand(_ command: HandCommand, from session: Session) {
        let runtime = session.runtime
        switch command {
        case .up, .down:
            let up = command == .up
            let changed = (session.handRaised != nil) != up
            runtime.setHand(session, raisedAt: up ? (session.handRaised ?? MonotonicClock.nanoseconds()) : nil)
            stage(session, .bytes(Wire.hand(up: up)))
            if changed { audienceChanged(runtime) }
        case .downFor, .downAll:
            guard session.control else {
                stage(session, .bytes(Wire.error(ProtocolError(
                    code: .forbidden, message: "lowering others' hands needs control; send AUTH <token>", closesConnection: false))))
                return
            }
            var lowered = 0
            if case .downFor(let name) = command {
                guard let member = runtime.members.values.first(where: { $0.name == name }) else {
                    stage(session, .bytes(Wire.error(ProtocolError(code: .notFound, message: "no member \(name) in room \(runtime.room.name)",
                                                                  closesConnection: false))))
                    return
                }
                if member.handRaised != nil {
                    lowered = 1
                    runtime.setHand(member, raisedAt: nil)
                    if member !== session { stage(member, .bytes(Wire.handLowered(by: session.name))) }
                }
            } else {
                for member in runtime.members.values where member.handRaised != nil {
                    runtime.setHand(member, raisedAt: nil)
                    if member !== session { stage(member, .bytes(Wire.handLowered(by: session.name))) }
                    lowered += 1
                }
            }
            stage(session, .bytes(Wire.handsLowered(lowered)))
            if lowered > 0 { audienceChanged(runtime) }
        }
    }

    /// A member came, went, or changed its view or hand: the room's `AUDIENCE` goes out now, or
    /// when the coalescer says (at most 4 a second per room).
    func audienceChanged(_ runtime: RoomRuntime) {
        guard runtime.room.policy.requiresToken else { return }
        let now = MonotonicClock.milliseconds()
        switch runtime.audienceCoalescer.changed(now: now) {
        case .send:
            sendAudience(runtime)
        case .sendAt(let due):
            hooks.audienceDue.append(runtime)
            armAudienceTimer(at: due, now: now)
        case .wait:
            break
        }
    }

    /// The room's `AUDIENCE` event to each of its members with control (or only to `member`).
    /// Only in presenter rooms: an open room has no presenter, and every reader has control
    /// there (`STATUS` and `WHO` still show the counts).
    func sendAudience(_ runtime: RoomRuntime, to member: Session? = nil) {
        guard runtime.room.policy.requiresToken else { return }
        let line = Wire.audience(room: runtime.room.name, runtime.audience, firstHand: runtime.firstHand)
        if let member {
            stage(member, .bytes(line))
            return
        }
        for m in runtime.members.values where m.control { stage(m, .bytes(line)) }
    }

    private func armAudienceTimer(at due: UInt64, now: UInt64) {
        if let armed = hooks.audienceTimerAt, armed <= due { return }
        let timer = hooks.audienceTimer ?? UV.Timer(loop: loop)
        hooks.audienceTimer = timer
        hooks.audienceTimerAt = due
        timer.start(afterMilliseconds: due > now ? due - now : 0) { self.audienceTimerFired() }
    }

    private func audienceTimerFired() {
        hooks.audienceTimerAt = nil
        let now = MonotonicClock.milliseconds()
        let due = hooks.audienceDue
        hooks.audienceDue = []
        var next: UInt64?
        for runtime in due {
            if runtime.audienceCoalescer.fire(now: now) {
                sendAudience(runtime)
            } else if let at = runtime.audienceCoalescer.nextDue {
                hooks.audienceDue.append(runtime)
                next = min(next ?? at, at)
            }
        }
        if let next { armAudienceTimer(at: next, now: now) }
    }
}
