/// Whether the Redis engine can make changes, and what it does as its two connections (the
/// command connection and the subscriber) come and go: the decisions of outage handling,
/// without I/O. Times are monotonic nanoseconds.
///
/// - Start. Redis unreachable while the rooms were read (``startedOffline(now:)``): the first
///   connection reconciles every room (``Action/lateLoad``). Reachable: groups formed before
///   the loop's connections are up (the rooms created at start) are held, and sent once they
///   are (``Action/submitHeld(_:)``); the rooms are read again once the last of them settles
///   (``groupSettled(_:)``). Navigations asked meanwhile wait for the connections
///   (``navigationGate(waiting:)``) rather than get `ERR 503` from a daemon just started.
/// - Outage. A lost connection (closed, refused, a connect or an answer past its limit) fails
///   every group sent and the held ones, is logged once per outage, and connecting again is
///   tried with ``Backoff`` (100 ms to 5 s). Both connections up again: logged with the outage's
///   length, and every room is read again (``Action/resync``).
public struct RedisAvailability: Equatable, Sendable {
    /// A group formed before the first connections were up, with the rooms it saves.
    public struct HeldGroup: Equatable, Sendable {
        public let group: UInt64
        public let rooms: [SavedRoom]

        public init(group: UInt64, rooms: [SavedRoom]) {
            self.group = group
            self.rooms = rooms
        }
    }

    /// What the engine must do, in order.
    public enum Action: Equatable, Sendable {
        /// Log that Redis is unavailable, and why (once per outage).
        case reportOutage(reason: String)
        /// Log that Redis is back after an outage of this long.
        case reportBack(afterNanoseconds: UInt64)
        /// Stop the connect limit's timer: the connections are up.
        case stopConnectTimer
        /// Close both connections.
        case closeConnections
        /// Fail every group sent and not settled (``RedisGroupLedger/lost()``).
        case failSentGroups
        /// Fail the held groups: every group after `after`.
        case failHeldGroups(after: UInt64)
        /// Connect again after this many milliseconds.
        case reconnect(afterMilliseconds: UInt64)
        /// Reconcile every room with Redis as a start with Redis up would have (``LateLoad``).
        case lateLoad
        /// Send the groups held for the first connections, in order.
        case submitHeld([HeldGroup])
        /// Read every room again (missing ones are created, ones gone back are restarted).
        case resync
        /// Ask the navigations waiting for the first connections again.
        case askWaitingAgain
    }

    /// What to do with a group formed now.
    public enum Submission: Equatable, Sendable {
        /// Send it.
        case send
        /// Held for the first connections (``Action/submitHeld(_:)``).
        case held
        /// Redis is unavailable: it fails at once (`failed(after: group - 1)`).
        case fail
    }

    /// What to do with a navigation asked now.
    public enum NavigationGate: Equatable, Sendable {
        /// Send it.
        case send
        /// Keep it until the first connections are up or have failed (``Action/askWaitingAgain``).
        case wait
        /// Answer `ERR 503`.
        case unavailable
    }

    /// At most this many navigations wait for the first connections (a flood gets `ERR 503`,
    /// as in an outage).
    public static let maxWaitingForFirstConnection = 4096

    /// Whether both connections are up: changes can be made.
    public private(set) var isAvailable = false
    /// Since when Redis has been unavailable, while it is (and it was once available or
    /// unreachable at start).
    public private(set) var outageSince: UInt64?
    /// Whether the connections have been up once (or the first late load is under way).
    public private(set) var everAvailable = false
    /// Redis was unreachable at start (or went away before the first connections were up):
    /// the first connections reconcile the rooms.
    public private(set) var startedOffline = false
    /// Shutdown: no reconnecting, nothing held.
    public private(set) var stopped = false
    /// Outages ended: both connections up again after Redis was unavailable (`INFO engine`,
    /// `/metrics`).
    public private(set) var reconnects: UInt64 = 0
    private var held: [HeldGroup] = []
    private var resyncAfterGroup: UInt64?
    private var commandReady = false
    private var subscriberReady = false
    private var backoff = Backoff(longestMilliseconds: 5000)

    /// Nothing connected yet.
    public init() {}

    /// The rooms could not be read at start: Redis is unavailable since `now`.
    public mutating func startedOffline(now: UInt64) {
        startedOffline = true
        outageSince = now
    }

    /// New connections are being made: neither is up.
    public mutating func connecting() {
        commandReady = false
        subscriberReady = false
    }

    /// The command connection answered its first command at `now`.
    public mutating func commandConnectionReady(now: UInt64) -> [Action] {
        commandReady = true
        return becameReadyIfBoth(now: now)
    }

    /// The subscriber's subscription was confirmed at `now`.
    public mutating func subscriberReady(now: UInt64) -> [Action] {
        subscriberReady = true
        return becameReadyIfBoth(now: now)
    }

    private mutating func becameReadyIfBoth(now: UInt64) -> [Action] {
        guard commandReady && subscriberReady, !isAvailable else { return [] }
        isAvailable = true
        backoff.reset()
        var actions: [Action] = [.stopConnectTimer]
        if let since = outageSince {
            actions.append(.reportBack(afterNanoseconds: now >= since ? now - since : 0))
            outageSince = nil
            reconnects &+= 1
        }
        if !everAvailable && startedOffline {
            everAvailable = true
            return actions + [.lateLoad]
        }
        if !everAvailable {
            // The rooms created at start go first, so the re-read after them finds them.
            everAvailable = true
            let groups = held
            held.removeAll()
            if let last = groups.last {
                resyncAfterGroup = last.group
                return actions + [.submitHeld(groups), .askWaitingAgain]
            }
        }
        return actions + [.resync, .askWaitingAgain]
    }

    /// A connection was lost at `now`, or never came up, for `reason`.
    public mutating func lost(reason: String, now: UInt64) -> [Action] {
        guard !stopped else { return [] }
        var actions: [Action] = []
        if outageSince == nil {
            outageSince = now
            actions.append(.reportOutage(reason: reason))
        }
        isAvailable = false
        connecting()
        actions += [.closeConnections, .failSentGroups]
        if !everAvailable, let first = held.first {
            // Redis answered the start-up reads but went away before the connections were up:
            // the rooms created at start are not saved (so HELLO does not wait for them), and
            // the first connection reconciles every room as after a start without Redis.
            held.removeAll()
            resyncAfterGroup = nil
            startedOffline = true
            actions.append(.failHeldGroups(after: first.group - 1))
        }
        actions += [.askWaitingAgain, .reconnect(afterMilliseconds: backoff.next())]
        return actions
    }

    /// The group `group` with `rooms` was formed.
    public mutating func submit(group: UInt64, rooms: [SavedRoom]) -> Submission {
        if !everAvailable && !stopped && outageSince == nil {
            held.append(HeldGroup(group: group, rooms: rooms))
            return .held
        }
        return isAvailable ? .send : .fail
    }

    /// A navigation was asked, with `waiting` navigations waiting already.
    public func navigationGate(waiting: Int) -> NavigationGate {
        if isAvailable { return .send }
        let mayWait = !everAvailable && outageSince == nil && !stopped && waiting < Self.maxWaitingForFirstConnection
        return mayWait ? .wait : .unavailable
    }

    /// Group `group` settled: true when the rooms are to be read again now (the last group
    /// held for the first connections is saved).
    public mutating func groupSettled(_ group: UInt64) -> Bool {
        guard let after = resyncAfterGroup, group >= after else { return false }
        resyncAfterGroup = nil
        return true
    }

    /// The connection was lost during the late load: the next connections load late again.
    public mutating func lateLoadInterrupted() {
        everAvailable = false
    }

    /// Shutdown began: no reconnecting.
    public mutating func shutdown() {
        stopped = true
    }
}
