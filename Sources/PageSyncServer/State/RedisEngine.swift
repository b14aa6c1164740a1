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
/// - Outage: both connections are dropped and made again with backoff (``Backoff``:
///   100 ms doubling to 5 s); meanwhile navigations are `.unavailable` and groups fail. Logged
///   once per outage. A Redis that keeps the connection but stops answering (paused, hung) is
///   an outage too once commands have waited ``answerLimitMs`` with no reply
///   (``AnswerWatchdog``): their callers get `.unavailable` rather than wait for ever. Redis
///   may still run them when it resumes (they were sent), so such a change can be made after
///   its ERR 503; it then reaches every client as a `PAGE`. Once back, every room is read
///   again (``resync()``): a missing room is created with a new epoch, and so is one that went
///   back behind what this daemon served saved in its epoch.
///
/// The decisions are pure types, tested without Redis: ``RedisAvailability`` (what an outage
/// and a reconnection do), ``RedisGroupLedger`` (when groups settle or fail),
/// ``AnswerWatchdog`` and ``ConnectLimit`` (when waiting is an outage), and ``RedisReplies``
/// (what each reply means). This type carries them out on the loop.
final class RedisEngine: AuthoritativeStateEngine, @unchecked Sendable {
    var onEvent: ((EngineEvent) -> Void)?
    var snapshot: (() -> [SavedRoom])?
    var onRoomState: ((SavedRoom) -> Void)?
    var pageCount: ((String) -> Int)?
    var savedRooms: (() -> [SavedRoom])?
    /// Rooms are reconciled by the coordinator; the engine never refuses a local group up front.
    var refusal: String? { nil }
    var isBusy: Bool { inFlight > 0 }
    var isAvailable: Bool { availability.isAvailable }
    var statistics: EngineStatistics {
        var statistics = EngineStatistics(kind: .redis)
        statistics.redisUp = availability.isAvailable
        statistics.redisReconnects = availability.reconnects
        return statistics
    }

    let loop: EventLoop
    let url: RedisURL
    private let prefix: String
    let roomNames: [String]
    let logger: Logger
    /// Identifies this process's presence entries.
    let daemonID: String
    private var endpoint: RedisEndpoint?
    var command: RedisConnection?
    private var subscriber: RedisConnection?
    /// The scripts' SHA1s, once loaded.
    var sha: [String: String] = [:]
    private var retryTimer: UV.Timer?
    var availability = RedisAvailability()
    var ledger = RedisGroupLedger()
    var watchdog = AnswerWatchdog(limitNanoseconds: RedisEngine.answerLimitMs * 1_000_000)
    /// Commands sent and not answered.
    var inFlight = 0
    /// Navigations asked for while the first connections are being made (Redis answered the
    /// start-up reads, so it is not down): each is asked again once the connections are up or
    /// have failed (``RedisAvailability/navigationGate(waiting:)``).
    var waitingForFirstConnection: [() -> Void] = []
    /// A host name is being resolved again (off the loop) before the next connect.
    private var resolving = false
    /// When ``connect()`` asked (a fresh clock reading): the connect limit counts from here.
    private var connectingSince: UInt64?
    /// Why Redis refused the last navigation (an error reply), until one goes through.
    var refusing: String?
    /// How long new connections may take to answer before it counts as an outage.
    static let connectLimitMs: UInt64 = 3000
    /// How long commands on an open connection may wait with no reply before it counts as an
    /// outage (a paused or hung Redis keeps the TCP connection, so nothing else notices).
    static let answerLimitMs: UInt64 = 3000
    private var answerTimer: UV.Timer?

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
                let reply = try client.command(["HMGET", roomKey(name), "page", "version", "by", "doc", "epoch", "line", "mark"])
                switch RedisReplies.roomHash(reply, room: name) {
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
        availability.startedOffline(now: MonotonicClock.nanoseconds())
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

    func started() {
        connect()
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: 500, repeatMilliseconds: 500) { [unowned self] in
            if self.watchdog.tick(now: MonotonicClock.nanoseconds()) {
                self.connectionLost("no answer within \(Self.answerLimitMs / 1000) s")
            }
        }
        answerTimer = timer
    }

    func closeCleanly() {}

    func shutdown() {
        availability.shutdown()
        retryTimer?.close()
        retryTimer = nil
        answerTimer?.close()
        answerTimer = nil
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
        guard !availability.stopped, !resolving else { return }
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
        availability.connecting()
        let command = RedisConnection(loop: loop)
        let subscriber = RedisConnection(loop: loop)
        self.command = command
        self.subscriber = subscriber
        let lost: (String?) -> Void = { [unowned self] reason in self.connectionLost(reason ?? "connection closed") }
        for connection in [command, subscriber] {
            if let failure = connection.connect(to: endpoint, onConnect: { [unowned self] failure in
                if let failure { self.connectionLost(failure) }
            }, onDisconnect: lost) {
                connectionLost(failure)
                return
            }
        }
        for args in setupCommands() {
            command.send(args) { [unowned self] reply in self.checkSetup(args[0], reply) }
            if args[0] == "AUTH" { subscriber.send(args) { [unowned self] reply in self.checkSetup(args[0], reply) } }
        }
        command.send(["PING"]) { [unowned self, weak command] reply in
            guard let command, command === self.command, reply != nil else { return }
            self.perform(self.availability.commandConnectionReady(now: MonotonicClock.nanoseconds()))
        }
        let pattern = RedisReplies.globEscaped(prefix) + "room:*"
        subscriber.psubscribe(pattern) { [unowned self, weak subscriber] reply in
            guard let subscriber, subscriber === self.subscriber, let reply else { return }
            self.published(reply)
        }
        // A connect that hangs (a dropped SYN) counts as an outage too.
        connectingSince = MonotonicClock.nanoseconds()
        armRetry(afterMs: Self.connectLimitMs, reconnecting: false)
    }

    private func checkSetup(_ what: String, _ reply: RedisReply?) {
        if case .error(let e) = reply { connectionLost("\(what) failed: \(e)") }
    }

    func connectionLost(_ reason: String) {
        perform(availability.lost(reason: reason, now: MonotonicClock.nanoseconds()))
    }

    /// Carries out what ``RedisAvailability`` decided, in order.
    func perform(_ actions: [RedisAvailability.Action]) {
        for action in actions {
            switch action {
            case .reportOutage(let reason):
                logger.error("redis \(url) unavailable: \(reason); changes get ERR 503 until it is back")
            case .reportBack(let nanoseconds):
                logger.notice("redis \(url) is back after \(Duration.nanoseconds(Int64(clamping: nanoseconds))); reading the rooms again")
            case .stopConnectTimer:
                retryTimer?.stop()
            case .closeConnections:
                let c = command, s = subscriber
                command = nil
                subscriber = nil
                c?.close()
                s?.close()
            case .failSentGroups:
                if let event = ledger.lost() { report(event) }
            case .failHeldGroups(let after):
                onEvent?(.failed(after: after, reason: "state engine unavailable"))
            case .reconnect(let milliseconds):
                armRetry(afterMs: milliseconds, reconnecting: true)
            case .lateLoad:
                lateLoad()
            case .submitHeld(let held):
                for group in held { submit(group: group.group, rooms: group.rooms) }
            case .resync:
                resync()
            case .askWaitingAgain:
                askWaitingNavigationsAgain()
            }
        }
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

    /// The connect limit's timer fired: measured again with a fresh clock (``ConnectLimit``).
    private func connectLimitReached(lastLook: Bool) {
        let waited = connectingSince.map { MonotonicClock.nanoseconds() &- $0 }
        switch ConnectLimit.decide(waitedNanoseconds: waited, limitMilliseconds: Self.connectLimitMs, lastLook: lastLook) {
        case .waitMore(let milliseconds):
            armRetry(afterMs: milliseconds, reconnecting: false)
        case .lookOnceMore:
            armRetry(afterMs: 1, reconnecting: false, lastLook: true)
        case .outage:
            connectionLost("no answer within 3 s")
        }
    }

    private func published(_ reply: RedisReply) {
        switch RedisReplies.publication(reply) {
        case .subscribed:
            perform(availability.subscriberReady(now: MonotonicClock.nanoseconds()))
        case .state(let saved):
            onRoomState?(saved)
        case .malformed(let channel, let line):
            logger.warning("ignoring a malformed state on \(channel): \(line)")
        case .other:
            break
        }
    }

    /// Reports a group's settlement or failure to the coordinator; the rooms are read again
    /// once the groups held for the first connections are saved.
    func report(_ event: RedisGroupLedger.Event) {
        switch event {
        case .settled(let group):
            onEvent?(.settled(upTo: group))
            if availability.groupSettled(group) { resync() }
        case .failed(let after):
            onEvent?(.failed(after: after, reason: "state engine unavailable"))
        }
    }
}
