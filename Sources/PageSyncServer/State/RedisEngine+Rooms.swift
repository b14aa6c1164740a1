import Logging
import PageSyncCore
import UV

/// The Redis engine's commands: navigations, groups, reconciling rooms, and presence.
extension RedisEngine {
    // MARK: - Reconciling rooms

    /// After (re)connecting: every room read again and applied. A missing one is created with
    /// a new epoch from the state this daemon last served saved; so is one of that epoch at an
    /// older version (Redis restarted from an older snapshot, a failover to a lagging replica,
    /// an overwrite): its clients saw later versions of that epoch, so going on from the older
    /// one would hand out versions again, for other pages. One atomic script per room, so of
    /// several daemons one makes the new epoch and the others adopt it.
    func resync() {
        let saved = Dictionary(((savedRooms ?? snapshot)?() ?? []).map { ($0.room, $0) }, uniquingKeysWith: { a, _ in a })
        for name in roomNames {
            guard let mine = saved[name] else { continue }
            var fresh = mine
            fresh.epoch = .random()
            sync(fresh, pageCount: Int.max, mode: "repair", of: mine.epoch) { [unowned self] outcome in
                switch outcome {
                case "created":
                    self.logger.warning("room \(name) has no state in redis \(self.url): starting it again at page \(fresh.page) with a new epoch \(fresh.epoch)")
                case "restarted":
                    self.logger.warning("room \(name): redis \(self.url) went back behind version \(mine.version) of epoch \(mine.epoch), which this daemon served (it lost changes); starting the room again at page \(fresh.page) with a new epoch \(fresh.epoch)")
                case nil:
                    self.logger.error("\(self.roomKey(name)) does not hold a pagesync room")
                default:
                    break
                }
            }
        }
    }

    /// The first connection after a start without Redis: each room as a start with Redis up
    /// would have left it (``LateLoad``), then applied and fanned out like any shared state.
    func lateLoad() {
        for local in snapshot?() ?? [] {
            let name = local.room
            send(["HMGET", roomKey(name), "page", "version", "by", "doc", "epoch", "line", "mark"]) { [unowned self] reply in
                guard let reply else {
                    // Lost again before the answer: the next connection loads late again.
                    self.availability.lateLoadInterrupted()
                    return
                }
                guard let shared = RedisReplies.roomHash(reply, room: name) else {
                    self.logger.error("\(self.roomKey(name)) does not hold a pagesync room")
                    return
                }
                let count = self.pageCount?(name) ?? Int.max
                switch LateLoad.decide(shared: shared, local: local, pageCount: count) {
                case .create(let state):
                    self.logger.notice("room \(name) has no state in redis \(self.url) yet: creating it at page \(state.page), epoch \(state.epoch)")
                    self.sync(state, pageCount: Int.max, mode: "create") { _ in }
                case .adopt(let state):
                    self.onRoomState?(state)
                case .recordDocument(let state):
                    self.sync(state, pageCount: count, mode: "doc") { _ in }
                }
            }
        }
    }

    // MARK: - Commands

    /// Sends `args` on the command connection; `completion` gets nil when it cannot be sent or
    /// the connection is lost before the answer.
    func send(_ args: [String], completion: @escaping (RedisReply?) -> Void) {
        guard let command, command.send(args, completion: { [unowned self] reply in
            self.inFlight -= 1
            self.watchdog.answered(due: self.inFlight, now: MonotonicClock.nanoseconds())
            completion(reply)
        }) else {
            completion(nil)
            return
        }
        watchdog.sent(due: inFlight, now: MonotonicClock.nanoseconds())
        inFlight += 1
    }

    /// EVALSHA, loading the script first when Redis does not know it (NOSCRIPT).
    private func eval(_ name: String, _ source: String, keys: [String], args: [String], completion: @escaping (RedisReply?) -> Void) {
        let run: (String) -> Void = { [unowned self] sha in
            self.send(["EVALSHA", sha, String(keys.count)] + keys + args) { [unowned self] reply in
                if case .error(let e) = reply, e.hasPrefix("NOSCRIPT") {
                    self.sha[name] = nil
                    self.eval(name, source, keys: keys, args: args, completion: completion)
                } else {
                    completion(reply)
                }
            }
        }
        if let known = sha[name] {
            run(known)
            return
        }
        send(["SCRIPT", "LOAD", source]) { [unowned self] reply in
            guard let reply, let loaded = reply.text, case .string = reply else {
                if case .error(let e) = reply { self.logger.error("SCRIPT LOAD \(name): \(e)") }
                completion(reply)
                return
            }
            self.sha[name] = loaded
            run(loaded)
        }
    }

    func navigate(room: String, navigation: Navigation, ifVersion: UInt64?, by: String,
                  pageCount: Int, wraps: Bool, saved: RoomState, completion: @escaping (NavigationDecision) -> Void) {
        let (op, page): (String, String) = switch navigation {
        case .next: ("next", "")
        case .previous: ("prev", "")
        case .first: ("first", "")
        case .last: ("last", "")
        case .goto(let p): ("goto", String(p.number))
        }
        change(room: room, op: op, value: page, navigation: navigation, ifVersion: ifVersion, by: by, pageCount: pageCount,
               wraps: wraps, checkedPage: "", saved: saved, completion: completion)
    }

    func changeFocus(room: String, focus: FocusChange, ifVersion: UInt64?, by: String, page: PageNumber,
                     saved: RoomState, completion: @escaping (NavigationDecision) -> Void) {
        let (op, value): (String, String) = switch focus {
        case .line(let line): ("line", String(line))
        case .mark(let mark): ("mark", RedisRoomFields.markText(mark))
        }
        change(room: room, op: op, value: value, navigation: nil, ifVersion: ifVersion, by: by, pageCount: Int(Int32.max),
               wraps: false, checkedPage: String(page.number), saved: saved, completion: completion)
    }

    /// Runs the navigation script (``RedisScripts/navigate``) for `op` once Redis is there.
    private func change(room: String, op: String, value: String, navigation: Navigation?, ifVersion: UInt64?, by: String,
                        pageCount: Int, wraps: Bool, checkedPage: String, saved: RoomState,
                        completion: @escaping (NavigationDecision) -> Void) {
        switch availability.navigationGate(waiting: waitingForFirstConnection.count) {
        case .send:
            break
        case .wait:
            waitingForFirstConnection.append { [unowned self] in
                self.change(room: room, op: op, value: value, navigation: navigation, ifVersion: ifVersion, by: by,
                            pageCount: pageCount, wraps: wraps, checkedPage: checkedPage, saved: saved, completion: completion)
            }
            return
        case .unavailable:
            completion(.unavailable)
            return
        }
        let key = roomKey(room)
        eval("navigate", RedisScripts.navigate, keys: [key],
             args: [op, value, ifVersion.map { String($0) } ?? "", by, String(max(1, pageCount)), wraps ? "1" : "0", key, room,
                    saved.epoch.description, String(saved.version), checkedPage]) { [unowned self] reply in
            let meaning = RedisReplies.navigation(reply, room: room, key: key, navigation: navigation, ifVersion: ifVersion,
                                                  servedVersion: saved.version)
            switch meaning {
            case .unavailable:
                return completion(.unavailable)
            case .refused(let reason):
                // Redis is there but refuses the write (out of memory, a read-only replica), or
                // someone else wrote the room's key: not an outage, and not saved. Logged once
                // until a navigation goes through.
                if self.refusing != reason {
                    self.refusing = reason
                    self.logger.error("redis \(self.url) refused a change of room \(room): \(reason); changes get ERR 507 while it does")
                }
                return completion(.notSaved(reason))
            case .decided, .unexpected:
                break
            }
            if self.refusing != nil {
                self.refusing = nil
                self.logger.notice("redis \(self.url) accepts changes again")
            }
            guard case .decided(let decision) = meaning else {
                self.logger.error("navigation script for room \(room): unexpected reply \(reply.map { "\($0)" } ?? "none")")
                return completion(.unavailable)
            }
            if decision == .missing { self.resync() }
            completion(decision)
        }
    }

    /// Runs the sync script (``RedisScripts/sync``) and applies the state it leaves; `completion`
    /// gets its outcome (`created`, `restarted`, `changed`, `kept`), or nil when it failed.
    func sync(_ state: SavedRoom, pageCount: Int, mode: String, of epoch: Epoch? = nil,
              completion: @escaping (String?) -> Void) {
        let key = roomKey(state.room)
        let count = pageCount == Int.max ? String(Int32.max) : String(max(1, pageCount))
        eval("sync", RedisScripts.sync, keys: [key],
             args: [String(state.page.number), String(state.version), state.by ?? "-", state.doc, state.epoch.description,
                    count, key, state.room, mode, Epoch.random().description, (epoch ?? state.epoch).description,
                    String(state.line), RedisRoomFields.markText(state.mark)]) { [unowned self] reply in
            switch RedisReplies.sync(reply, room: state.room) {
            case .applied(let outcome, let saved):
                self.onRoomState?(saved)
                completion(outcome)
            case .unexpected:
                self.logger.error("sync script for room \(state.room): unexpected reply \(reply.map { "\($0)" } ?? "none")")
                completion(nil)
            case .noAnswer, .corrupt:
                completion(nil)
            }
        }
    }

    // MARK: - Groups

    func submit(group: UInt64, rooms: [SavedRoom]) {
        switch availability.submit(group: group, rooms: rooms) {
        case .held:
            return
        case .fail:
            onEvent?(.failed(after: group - 1, reason: "state engine unavailable"))
            return
        case .send:
            break
        }
        for event in ledger.sent(group: group, replies: rooms.count) { report(event) }
        for room in rooms {
            sync(room, pageCount: pageCount?(room.room) ?? Int.max, mode: "doc") { [unowned self] outcome in
                for event in self.ledger.replied(group: group, ok: outcome != nil) { self.report(event) }
            }
        }
    }

    // MARK: - Presence

    func publishMembers(room: String, lines: [String]) {
        guard isAvailable else { return }
        eval("presence", RedisScripts.presence, keys: [presenceKey(room)],
             args: [daemonID, String(PresenceRules.ttlMilliseconds), lines.joined(separator: "\n")]) { _ in }
    }

    func otherMembers(rooms: [String], completion: @escaping ([[String]]?) -> Void) {
        guard isAvailable else { return completion(nil) }
        eval("members", RedisScripts.members, keys: rooms.map(presenceKey), args: [daemonID]) { reply in
            completion(RedisReplies.members(reply, rooms: rooms.count))
        }
    }
}
