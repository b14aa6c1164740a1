import Logging
import PageSyncCore
import UV

extension Coordinator {
    func handle(_ line: ArraySlice<UInt8>, from session: Session) {
        let started = MonotonicClock.nanoseconds()
        defer { metrics.commandDuration.observe(MonotonicClock.nanoseconds() &- started) }
        if idleTimer != nil { admission.idle.active(session.id, now: MonotonicClock.milliseconds()) }
        switch line.withUnsafeBufferPointer({ CommandParser.parse(bytes: $0) }) {
        case .failure(let error):
            stage(session, .bytes(Wire.error(error)))
            if error.closesConnection {
                closeAfterFlush(session)
                logger.info("closing \(session.connection.peerDescription): \(error.message)")
            }
        case .success(let command):
            metrics.count(CommandVerb(command))
            execute(command, from: session)
        }
    }

    func execute(_ command: Command, from session: Session) {
        let runtime = session.runtime
        switch command {
        case .navigate(let navigation, let ifVersion):
            navigate(runtime, navigation, ifVersion: ifVersion, from: session)
        case .line(let line, let ifVersion):
            focus(runtime, .line(line), ifVersion: ifVersion, from: session)
        case .mark(let mark, let ifVersion):
            focus(runtime, .mark(mark), ifVersion: ifVersion, from: session)
        case .status:
            stage(session, reporting: .status(room: runtime.room.name, control: session.control, clients: runtime.members.count))
        case .text(let requested):
            let page = requested ?? runtime.room.state.page
            guard page.number <= runtime.document.pageCount else {
                stage(session, reporting: .navigationError(.noSuchPage(page), room: runtime.room.name))
                return
            }
            do {
                let text = try runtime.document.text(of: page, limit: config.maxTextBytes)
                let encoder = TextReplyEncoder(
                    page: page, pageCount: runtime.document.pageCount, doc: runtime.document.id,
                    bytes: text.bytes, pageByteCount: text.pageByteCount, truncated: text.truncated,
                    firstLine: runtime.document.index.firstLine(of: page))
                stage(session, .text(encoder, size: text.bytes.count + 64))
            } catch {
                logger.error("TEXT \(page) of room \(runtime.room.name): \(error)")
                stage(session, .bytes(Wire.error(ProtocolError(code: .internalError, message: "could not read the document", closesConnection: false))))
            }
        case .textFrom(let page, let offset):
            guard page.number <= runtime.document.pageCount else {
                stage(session, reporting: .navigationError(.noSuchPage(page), room: runtime.room.name))
                return
            }
            do {
                guard let piece = try runtime.document.text(of: page, from: offset, limit: config.maxTextBytes) else {
                    stage(session, .bytes(Wire.error(ProtocolError(
                        code: .pastEnd, message: "FROM \(offset) is past the end of page \(page)", closesConnection: false))))
                    return
                }
                let encoder = TextReplyEncoder(
                    page: page, pageCount: runtime.document.pageCount, doc: runtime.document.id, bytes: piece.bytes,
                    pageByteCount: piece.pageByteCount, truncated: piece.next < piece.pageByteCount,
                    piece: TextPiece(from: offset, next: piece.next, splitLine: piece.splitLine),
                    firstLine: runtime.document.index.firstLine(of: page))
                stage(session, .text(encoder, size: piece.bytes.count + 96))
            } catch {
                logger.error("TEXT \(page) FROM \(offset) of room \(runtime.room.name): \(error)")
                stage(session, .bytes(Wire.error(ProtocolError(code: .internalError, message: "could not read the document", closesConnection: false))))
            }
        case .notes(let requested):
            sendNotes(of: requested ?? runtime.room.state.page, to: session)
        case .rooms:
            if roomsAcrossDaemons(for: session) { return }
            stage(session, reporting: .rooms)
        case .join(let name):
            guard let target = rooms[name] else {
                stage(session, .bytes(Wire.error(ProtocolError(code: .notFound, message: "no room \"\(name)\"", closesConnection: false))))
                return
            }
            if target !== runtime {
                // The session is not in `target`, so every name counted there is another member's.
                guard UniqueNames.mayJoin(as: session.name, into: target.names) else {
                    stage(session, .bytes(Wire.error(ProtocolError(
                        code: .conflict, message: "\(UniqueNames.inUseMessage): \(session.name) is in room \(name); pick another NAME first",
                        closesConnection: false))))
                    return
                }
                delivery.catchUp(session)
                runtime.release(session)
                // A new room: its screen follows the new room's page, its hand is down.
                session.view = .follow
                session.handRaised = nil
                target.admit(session)
                delivery.entered(session, target)
                session.runtime = target
                session.control = !target.room.policy.requiresToken
                audienceChanged(runtime)
                audienceChanged(target)
            }
            stage(session, reporting: .joined(room: name, control: session.control, name: session.name))
            if session.control { sendAudience(target, to: session) }
        case .name(let name) where name == "-":
            stage(session, .bytes(Wire.error(.malformed("\"-\" means nobody on the wire; pick another name"))))
        case .name(let name):
            // `runtime.names` counts this session too, under its name now.
            guard UniqueNames.mayRename(to: name, from: session.name, in: runtime.names) else {
                let why = UniqueNames.isGuestName(name) ? "guest-<n> names are the server's" : "\(name) is here already"
                stage(session, .bytes(Wire.error(ProtocolError(
                    code: .conflict, message: "\(UniqueNames.inUseMessage): \(why)", closesConnection: false))))
                return
            }
            runtime.rename(session, to: name)
            stage(session, .bytes(Wire.named(name)))
        case .who(let offset):
            if whoAcrossDaemons(runtime, for: session, offset: offset) { return }
            // A bounded page, raised hands first (the longest up first), then in join order: the
            // reply to one WHO never grows with the room, and a hand is on its first page.
            let members = runtime.membersInWhoOrder
            let page = WhoPage(total: members.count, offset: offset, pageSize: config.whoPageSize)
            let lines = members[page.range].map { m in
                Wire.whoLine(member: Wire.whoMember(name: m.name, control: m.control, view: m.view, hand: m.handRaised != nil),
                             isYou: m === session)
            }
            stage(session, .bytes(Wire.who(page, total: members.count, lines: lines)))
        case .auth(let token):
            guard AuthTransportPolicy.allowsAuth(encrypted: session.connection.isEncrypted,
                                                 loopback: session.connection.peerIsLoopback,
                                                 plaintextAuthAllowed: config.plaintextAuth)
            else {
                stage(session, .bytes(Wire.error(ProtocolError(code: .forbidden, message: AuthTransportPolicy.refusal, closesConnection: false))))
                return
            }
            authenticate(token, from: session, in: runtime)
        case .ping(let text):
            stage(session, .bytes(Wire.pong(text)))
        case .help:
            stage(session, .bytes(Wire.help()))
        case .info(let section):
            stage(session, .bytes(info(section)))
        case .quit:
            stage(session, .bytes(Wire.quitting()))
            closeAfterFlush(session)
        case .view(let view):
            self.view(view, from: session)
        case .hand(let command):
            hand(command, from: session)
        }
    }

    /// Navigates the room: a refused navigation changes nothing (``Room/navigate(_:ifVersion:by:hasControl:)``),
    /// and while the engine refuses changes, one that would move is answered `ERR 507`
    /// without being made.
    private func navigate(_ runtime: RoomRuntime, _ navigation: Navigation, ifVersion: UInt64?, from session: Session) {
        if let authority {
            navigateThroughAuthority(authority, runtime, navigation, ifVersion: ifVersion, from: session)
            return
        }
        change(runtime, from: session, counted: true) {
            $0.navigate(navigation, ifVersion: ifVersion, by: session.name, hasControl: session.control)
        }
    }

    /// Makes a change of the room's state by `apply` (a navigation, `LINE`, `MARK`): a refused
    /// change changes nothing, and while the engine refuses changes, one that would move is
    /// answered `ERR 507` without being made. `counted`: a page change for the metrics.
    @inline(__always)
    func change(_ runtime: RoomRuntime, from session: Session, counted: Bool,
                _ apply: (inout Room) -> Result<NavigationOutcome, NavigationError>) {
        if let refusal = engine.refusal {
            // Tried on a copy: only a change that would move is refused.
            var trial = runtime.room
            if case .success(.moved) = apply(&trial) {
                stage(session, .bytes(Self.notSavedLine(refusal)))
                return
            }
        }
        // Made in place (no copy of the room): a refused change changes nothing.
        switch apply(&runtime.room) {
        case .success(.moved):
            if counted { countPageChange(runtime) }
            // The OK goes before the PAGE, and both wait for the group the change joins.
            delivery.moved(runtime, reply: runtime.navigatedReply, by: session)
        case .success(.unchanged):
            stage(session, .change(runtime.navigatedReply))
        case .failure(let error):
            stage(session, reporting: .navigationError(error, room: runtime.room.name))
        }
    }

    /// `ERR 507 state not saved: <reason>`.
    static func notSavedLine(_ reason: String) -> [UInt8] {
        Wire.error(ProtocolError(code: .notSaved, message: "state not saved: \(reason)", closesConnection: false))
    }
}
