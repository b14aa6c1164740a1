import Logging
import PageSyncCore
import UV

/// Room state in Redis, shared by every pagesyncd that uses the same Redis and key prefix.
///
/// - Start: each configured room's hash is read with a blocking client before the loop runs.
///   If Redis cannot be reached then (refused, timed out, host not resolvable), the daemon
///   starts anyway: rooms are served from a fresh local state, changes are `.unavailable`
///   (ERR 503), and once Redis answers each room is reconciled by ``LateLoad``'s rules.
///   An error *reply* at start (AUTH or SELECT refused, a key that is not a room) still
///   stops the daemon: that is a configuration mistake, not an outage. When the start-up
///   reads succeed, the loop's own connections are made next; a navigation asked before they
///   are up waits for them (at most their 3 s connect limit) rather than get ERR 503.
/// - Changes: one Lua script per navigation (``RedisScripts/navigate``) on the command
///   connection; the script publishes the new state, and one subscriber connection
///   (`PSUBSCRIBE <prefix>room:*`) hands every published state to ``onRoomState``.
/// - Outage: both connections are dropped and made again with backoff (100 ms doubling to
///   5 s); meanwhile navigations are `.unavailable` and groups fail. Logged once per outage.
///   A Redis that keeps the connection but stops answering (paused, hung) is an outage too once
///   commands have waited ``answerLimitMs`` with no reply: their callers get `.unavailable`
///   rather than wait for ever. Redis may still run them when it resumes (they were sent), so
///   such a change can be made after its ERR 503; it then reaches every client as a `PAGE`.
///   Once back, every room is read again (``resync()``): a missing room is created with a new
///   epoch, and so is one that went back behind what this daemon served saved in its epoch.
final class RedisEngine: AuthoritativeStateEngine, @unchecked Sendable {
    var onEvent: ((EngineEvent) -> Void)?
    var snapshot: (() -> [SavedRoom])?
    var onRoomState: ((SavedRoom) -> Void)?
    var pageCount: ((String) -> Int)?
    var savedRooms: (() -> [SavedRoom])?
    /// Rooms are reconciled by the coordinator; the engine never refuses a local group up front.
    var refusal: String? { nil }
    var isBusy: Bool { inFlight > 0 }
    private(set) var isAvailable = false

    private let loop: EventLoop
    private let url: RedisURL
    private let prefix: String
    private let roomNames: [String]
    private let logger: Logger
    /// Identifies this process's presence entries.
    let daemonID: String
    private var endpoint: RedisEndpoint?
    private var command: RedisConnection?
    private var subscriber: RedisConnection?
    private var sha: [String: String] = [:]
    private var retryTimer: UV.Timer?
    private var backoffMs: UInt64 = 100
    private var outageSince: ContinuousClock.Instant?
    private var ready = (command: false, subscriber: false)
    private var inFlight = 0
    /// Groups handed over and not settled: how many script replies each still waits for.
    private var groups: [(id: UInt64, remaining: Int, failed: Bool)] = []
    private var stopped = false
    /// Whether the connections have been up once; groups submitted before that wait for them.
    private var everAvailable = false
    private var heldGroups: [(group: UInt64, rooms: [SavedRoom])] = []
    /// Navigations asked for while the first connections are being made (Redis answered the
    /// start-up reads, so it is not down): they wait for those connections, at most the 3 s
    /// connect limit, instead of getting ERR 503 from a daemon that has just started. Each is
    /// asked again once the connections are up or have failed.
    private var waitingForFirstConnection: [() -> Void] = []
    /// At most this many navigations wait (a flood gets ERR 503, as in an outage).
    static let maxWaitingForFirstConnection = 4096
    /// The rooms are read again once this group (created at start) is settled.
    private var resyncAfterGroup: UInt64?
    /// Redis was unreachable at start: the first connection reconciles rooms (``LateLoad``).
    private var startedOffline = false
    /// A host name is being resolved again (off the loop) before the next connect.
    private var resolving = false
    /// When ``connect()`` asked (a fresh clock reading): the connect limit counts from here.
    private var connectingSince: ContinuousClock.Instant?
    /// Why Redis refused the last navigation (an error reply), until one goes through.
    private var refusing: String?
    /// How long new connections may take to answer before it counts as an outage.
    static let connectLimitMs: UInt64 = 3000
    /// How long commands on an open connection may wait with no reply before it counts as an
    /// outage (a paused or hung Redis keeps the TCP connection, so nothing else notices).
    static let answerLimitMs: UInt64 = 3000
    /// Since when commands have waited with no reply (the first send, or the last reply while
    /// more are due); nil when none is due.
    private var waitingSince: ContinuousClock.Instant?
    /// ``waitingSince`` as the answer watchdog saw it past the limit on its previous tick.
    private var overdueAtLastTick: ContinuousClock.Instant?
    private var answerWatchdog: UV.Timer?

    init(loop: EventLoop, url: RedisURL, prefix: String, roomNames: [String], logger: Logger) {
        self.loop = loop
        self.url = url
        self.prefix = prefix
        self.roomNames = roomNames
        self.logger = logger
        self.daemonID = Epoch.random().description
    }

    func roomKey(_ room: String) -> String { "\(prefix)room:\(room)" }
    func presenceKey(_ room: String) -> String { "\(prefix)who:\(room)" }

    // MARK: - Start

    func load() throws(StateEngineError) -> LoadedState {
        let client: RedisBlockingClient
        do {
            let endpoint = try Self.endpoint(of: url)
            self.endpoint = endpoint
            client = try RedisBlockingClient(endpoint: endpoint)
        } catch {
            return startOffline("\(error)")
        }
        var rooms: [String: SavedRoom] = [:]
        do {
            for args in setupCommands() {
                if case .error(let e) = try client.command(args) { throw StateEngineError("\(url): \(args[0]): \(e)") }
            }
            for name in roomNames {
                let reply = try client.command(["HMGET", roomKey(name), "page", "version", "by", "doc", "epoch"])
                switch Self.decodeHash(reply, room: name) {
                case .some(.some(let saved)): rooms[name] = saved
                case .some(.none): break
                case .none: throw StateEngineError("\(url): \(roomKey(name)) does not hold a pagesync room (\(reply))")
                }
            }
        } catch let error as StateEngineError {
            throw error
        } catch let error as RedisFailure {
            // The connection itself failed half-way: an outage like any other.
            return startOffline("\(error)")
        } catch {
            throw StateEngineError("\(url): \(error)")
        }
        return LoadedState(rooms: rooms)
    }

    /// Redis unreachable at start: serve from fresh local state, logged once (the outage).
    private func startOffline(_ reason: String) -> LoadedState {
        startedOffline = true
        outageSince = .now
        logger.error("redis \(url) unavailable at start: \(reason); serving anyway, changes get ERR 503 until it is back")
        return LoadedState(rooms: [:])
    }

    /// Where to connect: a TCP host resolved to a numeric address (blocking), or the socket path.
    private static func endpoint(of url: RedisURL) throws(RedisFailure) -> RedisEndpoint {
        switch url.location {
        case .tcp(let host, let port): try RedisEndpoint.resolving(host: host, port: port)
        case .unix(let path): .unix(path: path)
        }
    }

    /// AUTH and SELECT, as the URL asks.
    private func setupCommands() -> [[String]] {
        var out: [[String]] = []
        if let password = url.password { out.append(url.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]) }
        if url.database != 0 { out.append(["SELECT", String(url.database)]) }
        return out
    }

    /// An HMGET reply of a room hash: nil if it is not one, `.some(nil)` if the room is missing.
    static func decodeHash(_ reply: RedisReply, room: String) -> SavedRoom??  {
        guard case .array(let f) = reply, f.count == 5 else { return nil }
        if f[0] == .null && f[1] == .null { return .some(nil) }
        guard let page = f[0].text, let version = f[1].text else { return nil }
        let saved = RedisRoomFields.saved(room: room, page: page, version: version, by: f[2].text ?? "-",
                                          doc: f[3].text ?? "-", epoch: f[4].text ?? "0")
        return saved.map { .some($0) }
    }

    func started() {
        connect()
        let watchdog = UV.Timer(loop: loop)
        watchdog.start(afterMilliseconds: 500, repeatMilliseconds: 500) { [unowned self] in self.checkAnswers() }
        answerWatchdog = watchdog
    }

    /// Commands waited past ``answerLimitMs`` with no reply: an outage. Two ticks in a row must
    /// see the same wait overdue, so the loop reads its sockets in between (a daemon that was
    /// itself held up finds the replies that came meanwhile before it calls Redis gone).
    private func checkAnswers() {
        guard let since = waitingSince, since.duration(to: .now) >= .milliseconds(Int64(Self.answerLimitMs)) else {
            overdueAtLastTick = nil
            return
        }
        if overdueAtLastTick == since {
            overdueAtLastTick = nil
            connectionLost("no answer within \(Self.answerLimitMs / 1000) s")
        } else {
            overdueAtLastTick = since
        }
    }

    func closeCleanly() {}

    func shutdown() {
        stopped = true
        retryTimer?.close()
        retryTimer = nil
        answerWatchdog?.close()
        answerWatchdog = nil
        askWaitingNavigationsAgain()
    }

    /// The first connections are up or have failed: each waiting navigation is asked again,
    /// in the order it came (so after the rooms created at start, which were sent first).
    private func askWaitingNavigationsAgain() {
        let waiting = waitingForFirstConnection
        waitingForFirstConnection.removeAll()
        for navigation in waiting { navigation() }
    }

    // MARK: - Connections

    private func connect() {
        guard !stopped, !resolving else { return }
        guard let endpoint else {
            // The host did not resolve at start: resolve it again on a pool thread.
            resolving = true
            let url = self.url
            loop.queueWork({ () -> Result<RedisEndpoint, RedisFailure> in
                Result { () throws(RedisFailure) in try Self.endpoint(of: url) }
            }) { [unowned self] result in
                self.resolving = false
                switch result {
                case .success(let resolved):
                    self.endpoint = resolved
                    self.connect()
                case .failure(let failure):
                    self.connectionLost(failure.description)
                }
            }
            return
        }
        ready = (false, false)
        let command = RedisConnection(loop: loop)
        let subscriber = RedisConnection(loop: loop)
        self.command = command
        self.subscriber = subscriber
        let lost: (String?) -> Void = { [unowned self] reason in self.connectionLost(reason ?? "connection closed") }
        if let failure = command.connect(to: endpoint, onConnect: { [unowned self] failure in
            if let failure { self.connectionLost(failure) }
        }, onDisconnect: lost) {
            connectionLost(failure)
            return
        }
        if let failure = subscriber.connect(to: endpoint, onConnect: { [unowned self] failure in
            if let failure { self.connectionLost(failure) }
        }, onDisconnect: lost) {
            connectionLost(failure)
            return
        }
        for args in setupCommands() {
            command.send(args) { [unowned self] reply in self.checkSetup(args[0], reply) }
            if args[0] == "AUTH" { subscriber.send(args) { [unowned self] reply in self.checkSetup(args[0], reply) } }
        }
        command.send(["PING"]) { [unowned self, weak command] reply in
            guard let command, command === self.command, reply != nil else { return }
            self.ready.command = true
            self.becameReadyIfBoth()
        }
        let pattern = Self.globEscaped(prefix) + "room:*"
        subscriber.psubscribe(pattern) { [unowned self, weak subscriber] reply in
            guard let subscriber, subscriber === self.subscriber, let reply else { return }
            self.published(reply)
        }
        // A connect that hangs (a dropped SYN) counts as an outage too.
        connectingSince = .now
        armRetry(afterMs: Self.connectLimitMs, reconnecting: false)
    }

    private func checkSetup(_ what: String, _ reply: RedisReply?) {
        if case .error(let e) = reply { connectionLost("\(what) failed: \(e)") }
    }

    private func becameReadyIfBoth() {
        guard ready.command && ready.subscriber, !isAvailable else { return }
        retryTimer?.stop()
        isAvailable = true
        backoffMs = 100
        if let since = outageSince {
            logger.notice("redis \(url) is back after \(since.duration(to: .now)); reading the rooms again")
            outageSince = nil
        }
        if !everAvailable && startedOffline {
            everAvailable = true
            lateLoad()
            return
        }
        if !everAvailable {
            // The rooms created at start go first, so the re-read below finds them.
            everAvailable = true
            let held = heldGroups
            heldGroups.removeAll()
            if let last = held.last {
                resyncAfterGroup = last.group
                for g in held { submit(group: g.group, rooms: g.rooms) }
                askWaitingNavigationsAgain()
                return
            }
        }
        resync()
        askWaitingNavigationsAgain()
    }

    private func connectionLost(_ reason: String) {
        guard !stopped else { return }
        if outageSince == nil {
            outageSince = .now
            logger.error("redis \(url) unavailable: \(reason); changes get ERR 503 until it is back")
        }
        isAvailable = false
        ready = (false, false)
        let c = command, s = subscriber
        command = nil
        subscriber = nil
        c?.close()
        s?.close()
        failGroups()
        if !everAvailable, let first = heldGroups.first {
            // Redis answered the start-up reads but went away before the connections were up:
            // the rooms created at start are not saved (so HELLO does not wait for them), and
            // the first connection reconciles every room as after a start without Redis.
            heldGroups.removeAll()
            resyncAfterGroup = nil
            startedOffline = true
            onEvent?(.failed(after: first.group - 1, reason: "state engine unavailable"))
        }
        askWaitingNavigationsAgain()  // now an outage: each gets ERR 503
        armRetry(afterMs: backoffMs, reconnecting: true)
        backoffMs = min(backoffMs * 2, 5000)
    }

    private func armRetry(afterMs: UInt64, reconnecting: Bool, lastLook: Bool = false) {
        let timer = retryTimer ?? UV.Timer(loop: loop)
        retryTimer = timer
        timer.start(afterMilliseconds: afterMs) { [unowned self] in
            if reconnecting {
                self.connect()
            } else if !self.isAvailable {
                self.connectLimitReached(lastLook: lastLook)
            }
        }
    }

    /// The connect limit's timer fired, which alone does not show that Redis did not answer:
    /// libuv's timers count from the loop's cached clock, which may predate ``connect()`` (a
    /// daemon held up while starting), and timers run before the loop reads its sockets (an
    /// answer that came while the daemon was held up is unread). So the wait is measured again
    /// with a fresh clock, and once the limit has really passed the connections get one more
    /// loop turn, their sockets read, before it is an outage (PROTOCOL.md: 503 only when Redis
    /// cannot be reached).
    private func connectLimitReached(lastLook: Bool) {
        let limit = Duration.milliseconds(Int64(Self.connectLimitMs))
        let waited = connectingSince.map { $0.duration(to: .now) } ?? limit
        if waited < limit {
            armRetry(afterMs: UInt64(((limit - waited) / .milliseconds(1)).rounded(.up)), reconnecting: false)
        } else if !lastLook {
            armRetry(afterMs: 1, reconnecting: false, lastLook: true)
        } else {
            connectionLost("no answer within 3 s")
        }
    }

    private func published(_ reply: RedisReply) {
        guard case .array(let parts) = reply, let kind = parts.first?.text else { return }
        if kind == "psubscribe" {
            ready.subscriber = true
            becameReadyIfBoth()
            return
        }
        guard kind == "pmessage", parts.count == 4, let line = parts[3].text else { return }
        guard let saved = RoomStateLine.decode(line) else {
            logger.warning("ignoring a malformed state on \(parts[2].text ?? "?"): \(line)")
            return
        }
        onRoomState?(saved)
    }

    /// After (re)connecting: every room read again and applied. A missing one is created with
    /// a new epoch from the state this daemon last served saved; so is one of that epoch at an
    /// older version (Redis restarted from an older snapshot, a failover to a lagging replica,
    /// an overwrite): its clients saw later versions of that epoch, so going on from the older
    /// one would hand out versions again, for other pages. One atomic script per room, so of
    /// several daemons one makes the new epoch and the others adopt it.
    private func resync() {
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
    private func lateLoad() {
        for local in snapshot?() ?? [] {
            let name = local.room
            send(["HMGET", roomKey(name), "page", "version", "by", "doc", "epoch"]) { [unowned self] reply in
                guard let reply else {
                    // Lost again before the answer: the next connection loads late again.
                    self.everAvailable = false
                    return
                }
                guard let shared = Self.decodeHash(reply, room: name) else {
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

    private func send(_ args: [String], completion: @escaping (RedisReply?) -> Void) {
        guard let command, command.send(args, completion: { [unowned self] reply in
            self.inFlight -= 1
            self.waitingSince = self.inFlight > 0 ? .now : nil
            completion(reply)
        }) else {
            completion(nil)
            return
        }
        if inFlight == 0 { waitingSince = .now }
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
        guard isAvailable else {
            if !everAvailable && outageSince == nil && !stopped
                && waitingForFirstConnection.count < Self.maxWaitingForFirstConnection {
                waitingForFirstConnection.append { [unowned self] in
                    self.navigate(room: room, navigation: navigation, ifVersion: ifVersion, by: by,
                                  pageCount: pageCount, wraps: wraps, saved: saved, completion: completion)
                }
                return
            }
            completion(.unavailable)
            return
        }
        let (op, page): (String, String) = switch navigation {
        case .next: ("next", "")
        case .previous: ("prev", "")
        case .first: ("first", "")
        case .last: ("last", "")
        case .goto(let p): ("goto", String(p.number))
        }
        let key = roomKey(room)
        eval("navigate", RedisScripts.navigate, keys: [key],
             args: [op, page, ifVersion.map { String($0) } ?? "", by, String(max(1, pageCount)), wraps ? "1" : "0", key, room,
                    saved.epoch.description, String(saved.version)]) { [unowned self] reply in
            guard let reply else { return completion(.unavailable) }
            if case .error(let e) = reply, NavigationDecision.isTransient(redisError: e) {
                return completion(.unavailable)
            }
            // Redis is there but refuses the write (out of memory, a read-only replica), or
            // someone else wrote the room's key: not an outage, and not saved. Logged once until
            // a navigation goes through.
            let refusal: String? = if case .error(let e) = reply {
                NavigationDecision.refusal(redisError: e)
            } else if Self.isCorrupt(reply) {
                "redis: \(key) does not hold a pagesync room (written by something else?); delete it to start the room again"
            } else {
                nil
            }
            if let reason = refusal {
                if self.refusing != reason {
                    self.refusing = reason
                    self.logger.error("redis \(self.url) refused a change of room \(room): \(reason); changes get ERR 507 while it does")
                }
                return completion(.notSaved(reason))
            }
            if self.refusing != nil {
                self.refusing = nil
                self.logger.notice("redis \(self.url) accepts changes again")
            }
            guard case .array(let items) = reply,
                  let decision = NavigationDecision.decode(items.map { $0.text ?? "" }, room: room, navigation: navigation, ifVersion: ifVersion)
            else {
                self.logger.error("navigation script for room \(room): unexpected reply \(reply)")
                return completion(.unavailable)
            }
            if decision == .missing { self.resync() }
            completion(decision)
        }
    }

    /// Runs the sync script (``RedisScripts/sync``) and applies the state it leaves; `completion`
    /// gets its outcome (`created`, `restarted`, `changed`, `kept`), or nil when it failed.
    private func sync(_ state: SavedRoom, pageCount: Int, mode: String, of epoch: Epoch? = nil,
                      completion: @escaping (String?) -> Void) {
        let key = roomKey(state.room)
        let count = pageCount == Int.max ? String(Int32.max) : String(max(1, pageCount))
        eval("sync", RedisScripts.sync, keys: [key],
             args: [String(state.page.number), String(state.version), state.by ?? "-", state.doc, state.epoch.description,
                    count, key, state.room, mode, Epoch.random().description, (epoch ?? state.epoch).description]) { [unowned self] reply in
            guard case .array(let items) = reply, items.count == 6, let outcome = items[0].text,
                  let saved = RedisRoomFields.saved(room: state.room, page: items[1].text ?? "", version: items[2].text ?? "",
                                                    by: items[3].text ?? "-", doc: items[4].text ?? "-", epoch: items[5].text ?? "")
            else {
                if let reply, !Self.isCorrupt(reply) { self.logger.error("sync script for room \(state.room): unexpected reply \(reply)") }
                return completion(nil)
            }
            self.onRoomState?(saved)
            completion(outcome)
        }
    }

    // MARK: - Groups

    func submit(group: UInt64, rooms: [SavedRoom]) {
        if !everAvailable && !stopped && outageSince == nil {
            heldGroups.append((group, rooms))
            return
        }
        guard isAvailable else {
            onEvent?(.failed(after: group - 1, reason: "state engine unavailable"))
            return
        }
        groups.append((group, rooms.count, false))
        for room in rooms {
            sync(room, pageCount: pageCount?(room.room) ?? Int.max, mode: "doc") { [unowned self] outcome in
                self.groupReply(group, ok: outcome != nil)
            }
        }
        if rooms.isEmpty { groupReply(group, ok: true, counts: false) }
    }

    private func groupReply(_ group: UInt64, ok: Bool, counts: Bool = true) {
        guard let i = groups.firstIndex(where: { $0.id == group }) else { return }
        if counts { groups[i].remaining -= 1 }
        if !ok { groups[i].failed = true }
        while let first = groups.first, first.remaining <= 0 {
            groups.removeFirst()
            if first.failed {
                groups.removeAll()
                onEvent?(.failed(after: first.id - 1, reason: "state engine unavailable"))
                return
            }
            onEvent?(.settled(upTo: first.id))
            if let after = resyncAfterGroup, first.id >= after {
                resyncAfterGroup = nil
                resync()
            }
        }
    }

    private func failGroups() {
        guard let first = groups.first else { return }
        groups.removeAll()
        onEvent?(.failed(after: first.id - 1, reason: "state engine unavailable"))
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
            guard case .array(let items) = reply, items.count == rooms.count else { return completion(nil) }
            completion(items.map { ($0.text ?? "").split(separator: "\n").map(String.init) })
        }
    }

    /// The scripts' answer for a key that does not hold a room.
    static func isCorrupt(_ reply: RedisReply) -> Bool {
        guard case .array(let items) = reply, items.count == 1 else { return false }
        return items[0].text == "corrupt"
    }

    /// A key prefix as a PSUBSCRIBE pattern that matches only itself.
    static func globEscaped(_ text: String) -> String {
        var out = ""
        for c in text {
            if "*?[]\\".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
