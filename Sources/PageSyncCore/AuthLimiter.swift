/// Limits how fast `AUTH` tokens can be guessed: per source address and per connection.
///
/// Pure: the caller passes the time (monotonic milliseconds) and the ids; nothing here
/// reads a clock or touches a socket.
///
/// - Per address: the first ``Policy/freeFailures`` wrong tokens cost nothing (a person
///   mistyping). Each later one locks the address for a delay that starts at
///   ``Policy/baseDelayMilliseconds`` and doubles up to ``Policy/maxDelayMilliseconds``.
///   While locked, every attempt from that address, right or wrong and on any connection,
///   is refused without being checked. So one address gets at most one checked attempt
///   per second after its free ones, however many connections it uses.
/// - Per connection: after ``Policy/attemptsPerConnection`` attempts that were wrong or
///   refused, the connection is to be closed.
/// - An address with no wrong token for ``Policy/forgetAfterMilliseconds`` starts over; so
///   does an address or connection that authenticated successfully.
/// - At most ``Policy/maxTrackedAddresses`` addresses are remembered; past that, the ones
///   whose last failure is oldest are forgotten first.
public struct AuthLimiter: Sendable {
    /// The limits.
    public struct Policy: Equatable, Sendable {
        /// Wrong tokens per address that do not lock it. Default 3.
        public var freeFailures: Int
        /// The lock after the first wrong token past the free ones. Default 1 s.
        public var baseDelayMilliseconds: UInt64
        /// The longest lock. Default 60 s.
        public var maxDelayMilliseconds: UInt64
        /// Wrong or refused attempts on one connection after which it is closed. Default 3.
        public var attemptsPerConnection: Int
        /// Quiet time after which an address's failures are forgotten. Default 10 minutes.
        public var forgetAfterMilliseconds: UInt64
        /// Addresses remembered at most. Default 100,000.
        public var maxTrackedAddresses: Int

        /// Creates a policy; every argument has the default documented on its property.
        public init(
            freeFailures: Int = 3, baseDelayMilliseconds: UInt64 = 1000, maxDelayMilliseconds: UInt64 = 60_000,
            attemptsPerConnection: Int = 3, forgetAfterMilliseconds: UInt64 = 600_000, maxTrackedAddresses: Int = 100_000
        ) {
            self.freeFailures = max(0, freeFailures)
            self.baseDelayMilliseconds = max(1, baseDelayMilliseconds)
            self.maxDelayMilliseconds = max(self.baseDelayMilliseconds, maxDelayMilliseconds)
            self.attemptsPerConnection = max(1, attemptsPerConnection)
            self.forgetAfterMilliseconds = forgetAfterMilliseconds
            self.maxTrackedAddresses = max(1, maxTrackedAddresses)
        }
    }

    /// Whether an attempt may be checked.
    public enum Admission: Equatable, Sendable {
        /// Check the token, then report ``AuthLimiter/failed(address:connection:now:)`` or
        /// ``AuthLimiter/succeeded(address:connection:)``.
        case check
        /// Do not check it: answer `ERR 429 too many attempts, retry in <retryAfterSeconds> s`;
        /// close the connection after that line when `closeConnection` is true.
        case refuse(retryAfterSeconds: Int, closeConnection: Bool)
    }

    /// What a wrong token costs.
    public struct Failure: Equatable, Sendable {
        /// Seconds until this address may try again (0: it may try at once).
        public var retryAfterSeconds: Int
        /// Close the connection after the reply.
        public var closeConnection: Bool

        /// Creates a failure outcome.
        public init(retryAfterSeconds: Int, closeConnection: Bool) {
            self.retryAfterSeconds = retryAfterSeconds
            self.closeConnection = closeConnection
        }
    }

    private struct AddressState: Sendable {
        var failures = 0
        var lastFailure: UInt64 = 0
        var lockedUntil: UInt64 = 0
    }

    private struct ConnectionState: Sendable {
        var attempts = 0
        var last: UInt64 = 0
    }

    /// The limits in force.
    public let policy: Policy
    private var addresses: [String: AddressState] = [:]
    private var connections: [Int: ConnectionState] = [:]

    /// Creates a limiter that remembers nothing yet.
    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// Addresses currently remembered (for tests and status).
    public var trackedAddressCount: Int { addresses.count }

    /// Connections currently remembered (for tests and status).
    public var trackedConnectionCount: Int { connections.count }

    /// Decides whether an `AUTH` from `address` on `connection` at `now` may be checked.
    /// A refusal counts against the connection.
    public mutating func admit(address: String, connection: Int, now: UInt64) -> Admission {
        forgetIfQuiet(address, now: now)
        guard let state = addresses[address], state.lockedUntil > now else { return .check }
        let attempts = countAttempt(connection: connection, now: now)
        return .refuse(retryAfterSeconds: Self.seconds(state.lockedUntil - now),
                       closeConnection: attempts >= policy.attemptsPerConnection)
    }

    /// Records a wrong token from `address` on `connection` at `now`.
    public mutating func failed(address: String, connection: Int, now: UInt64) -> Failure {
        forgetIfQuiet(address, now: now)
        var state = addresses[address] ?? AddressState()
        state.failures += 1
        state.lastFailure = now
        let beyondFree = state.failures - policy.freeFailures
        if beyondFree > 0 {
            state.lockedUntil = now + delay(afterLockedFailures: beyondFree)
        }
        addresses[address] = state
        let attempts = countAttempt(connection: connection, now: now)
        if addresses.count > policy.maxTrackedAddresses { shrink(now: now) }
        return Failure(
            retryAfterSeconds: state.lockedUntil > now ? Self.seconds(state.lockedUntil - now) : 0,
            closeConnection: attempts >= policy.attemptsPerConnection)
    }

    /// Records a right token: the address and the connection start over.
    public mutating func succeeded(address: String, connection: Int) {
        addresses[address] = nil
        connections[connection] = nil
    }

    /// The connection closed: forget it.
    public mutating func connectionClosed(_ connection: Int) {
        connections[connection] = nil
    }

    /// Forgets addresses and connections quiet for ``Policy/forgetAfterMilliseconds`` whose
    /// lock has ended. Call it now and then (for example once a minute).
    public mutating func prune(now: UInt64) {
        addresses = addresses.filter { !isForgettable($0.value, now: now) }
        connections = connections.filter { now < $0.value.last || now - $0.value.last < policy.forgetAfterMilliseconds }
    }

    /// The lock after the n-th wrong token past the free ones (n >= 1): base × 2^(n−1), capped.
    public func delay(afterLockedFailures n: Int) -> UInt64 {
        var delay = policy.baseDelayMilliseconds
        var step = 1
        while step < n && delay < policy.maxDelayMilliseconds {
            delay *= 2
            step += 1
        }
        return min(delay, policy.maxDelayMilliseconds)
    }

    // MARK: - Pieces

    private static func seconds(_ milliseconds: UInt64) -> Int {
        Int((milliseconds + 999) / 1000)
    }

    private func isForgettable(_ state: AddressState, now: UInt64) -> Bool {
        now >= state.lockedUntil && now >= state.lastFailure && now - state.lastFailure >= policy.forgetAfterMilliseconds
    }

    private mutating func forgetIfQuiet(_ address: String, now: UInt64) {
        if let state = addresses[address], isForgettable(state, now: now) { addresses[address] = nil }
    }

    private mutating func countAttempt(connection: Int, now: UInt64) -> Int {
        var state = connections[connection] ?? ConnectionState()
        state.attempts += 1
        state.last = now
        connections[connection] = state
        return state.attempts
    }

    /// Over the bound: drop forgettable addresses, then the oldest quarter by last failure.
    private mutating func shrink(now: UInt64) {
        prune(now: now)
        guard addresses.count > policy.maxTrackedAddresses else { return }
        let keep = policy.maxTrackedAddresses * 3 / 4
        let newest = addresses.sorted { $0.value.lastFailure > $1.value.lastFailure }.prefix(max(1, keep))
        addresses = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }
}
