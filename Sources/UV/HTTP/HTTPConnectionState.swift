/// Where one HTTP connection stands, and what its limits decide: a value with no I/O, driven by
/// ``HTTPServerConnection`` (events in, decisions out) and unit-tested without sockets.
///
/// A connection serves one request at a time: it reads a head, answers it, waits until the
/// answer has left (its bytes handed to the kernel), then reads the next. Bytes of a request
/// sent early (pipelining) wait meanwhile, unparsed. Times are monotonic milliseconds.
public struct HTTPConnectionState: Equatable, Sendable {
    /// What the connection is doing.
    public enum Phase: Equatable, Sendable {
        /// Waiting for a request head, or reading one. `since` is when the wait began (the
        /// connection's start, or the end of the response before), `firstByte` when the head's
        /// first byte came (nil: none yet), `bytes` how many of its bytes were parsed.
        case awaitingHead(since: UInt64, firstByte: UInt64?, bytes: Int)
        /// A response written at `since` has not left yet: nothing is parsed until it has.
        case responding(since: UInt64)
        /// A response that closes the connection was written; input is read and dropped until
        /// the peer closes, `lingerMilliseconds` pass or `maxLingerBytes` were dropped.
        case lingering(since: UInt64, dropped: Int)
        /// Closed.
        case closed
    }

    /// Why a connection is closed by its limits.
    public enum Expiry: Equatable, Sendable {
        /// No byte of a request came: within `headTimeoutMilliseconds` of the connection's start,
        /// or within `idleTimeoutMilliseconds` of the last response. Closed quietly.
        case idle
        /// A request head begun did not end within `headTimeoutMilliseconds` (of the connection's
        /// start for its first request, of the head's first byte for later ones): `408`, then closed.
        case headTimeout
        /// The linger after a closing response is over: closed.
        case lingerOver
        /// A response did not leave within `sendTimeoutMilliseconds` (the client reads
        /// nothing): closed, what was not sent dropped.
        case sendTimeout
    }

    /// The limits this connection keeps.
    public let limits: HTTPLimits
    /// What the connection is doing now.
    public private(set) var phase: Phase
    /// How many requests were answered on this connection (a later one may idle first).
    public private(set) var answered = 0
    /// When the connection was accepted.
    public let acceptedAt: UInt64

    /// A connection accepted at `now`, waiting for its first request.
    public init(limits: HTTPLimits, now: UInt64) {
        self.limits = limits
        self.acceptedAt = now
        self.phase = .awaitingHead(since: now, firstByte: nil, bytes: 0)
    }

    /// When a kept-alive connection began to wait for its next request, with no byte of it come
    /// yet: such a connection holds a slot for nothing, and may be closed to make room for a new
    /// one when the server is full (the client opens another when it wants one). nil for one
    /// that has not been answered yet, is reading a head, responding, lingering or closed.
    public var idleKeptAliveSince: UInt64? {
        guard answered > 0, case .awaitingHead(let since, nil, 0) = phase else { return nil }
        return since
    }

    /// How many more bytes of the current head may be parsed: the head is over
    /// ``HTTPLimits/maxHeadBytes`` if the parser still wants more after taking them all. 0 when no
    /// head is being read.
    public var headAllowance: Int {
        guard case .awaitingHead(_, _, let bytes) = phase else { return 0 }
        return max(0, limits.maxHeadBytes - bytes)
    }

    /// `count` bytes of a head were parsed at `now` and the head is not complete yet. Returns
    /// false when that makes the head too large (answer `431` and close).
    public mutating func parsed(_ count: Int, now: UInt64) -> Bool {
        guard case .awaitingHead(let since, let firstByte, let bytes) = phase else { return true }
        let total = bytes + count
        phase = .awaitingHead(since: since, firstByte: firstByte ?? (count > 0 ? now : nil), bytes: total)
        return total < limits.maxHeadBytes
    }

    /// A head was complete at `now`; its response is being written.
    public mutating func headComplete(now: UInt64) {
        if case .awaitingHead = phase { phase = .responding(since: now) }
    }

    /// The response was written at `now`. `keepOpen`: the connection stays open for another
    /// request (else it lingers, then closes). `drained`: its bytes already left.
    public mutating func responded(keepOpen: Bool, drained: Bool, now: UInt64) {
        answered += 1
        if !keepOpen {
            phase = .lingering(since: now, dropped: 0)
        } else if drained {
            phase = .awaitingHead(since: now, firstByte: nil, bytes: 0)
        } else {
            phase = .responding(since: now)
        }
    }

    /// The response's bytes left at `now`: the next request may be read.
    public mutating func drained(now: UInt64) {
        if case .responding = phase { phase = .awaitingHead(since: now, firstByte: nil, bytes: 0) }
    }

    /// `count` bytes were dropped while lingering. Returns false once ``HTTPLimits/maxLingerBytes``
    /// were dropped: close now.
    public mutating func dropped(_ count: Int) -> Bool {
        guard case .lingering(let since, let dropped) = phase else { return true }
        phase = .lingering(since: since, dropped: dropped + count)
        return dropped + count < limits.maxLingerBytes
    }

    /// Closed.
    public mutating func close() { phase = .closed }

    /// When the connection's current limit runs out (monotonic milliseconds), or nil once closed.
    public var deadline: UInt64? {
        switch phase {
        case .awaitingHead(let since, let firstByte, _):
            // The first request's head counts from the connection's start, so that a client
            // that trickles it in (slowloris) is closed as surely as one that sends nothing.
            if answered == 0 { return since + limits.headTimeoutMilliseconds }
            if let firstByte { return firstByte + limits.headTimeoutMilliseconds }
            return since + limits.idleTimeoutMilliseconds
        case .lingering(let since, _):
            return since + limits.lingerMilliseconds
        case .responding(let since):
            return since + limits.sendTimeoutMilliseconds
        case .closed:
            return nil
        }
    }

    /// Whether a limit ran out at `now`, and which.
    public func expiry(now: UInt64) -> Expiry? {
        guard let deadline, now >= deadline else { return nil }
        switch phase {
        case .awaitingHead(_, let firstByte, _): return firstByte == nil ? .idle : .headTimeout
        case .lingering: return .lingerOver
        case .responding: return .sendTimeout
        case .closed: return nil
        }
    }

    /// Whether a connection whose handshake (TLS) is still under way at `now` has taken longer
    /// than ``HTTPLimits/handshakeTimeoutMilliseconds`` since it was accepted: close it.
    public func handshakeOverdue(now: UInt64) -> Bool {
        now >= acceptedAt &+ limits.handshakeTimeoutMilliseconds
    }

    /// Whether a connection that answered `head` stays open for another request: only when the
    /// client allows it (``HTTPRequestHead/keepAlive``) and sent no body (a body is never read:
    /// the connection closes instead), and the server is not closing (`serverClosing`).
    public static func keepsOpen(after head: HTTPRequestHead, serverClosing: Bool) -> Bool {
        head.keepAlive && !head.hasBody && !head.upgrade && !serverClosing
    }
}
