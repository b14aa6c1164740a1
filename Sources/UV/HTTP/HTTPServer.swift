/// What a handler answers a request head with.
public enum HTTPReply {
    /// This response; the connection stays open for another request when
    /// ``HTTPConnectionState/keepsOpen(after:serverClosing:)`` says so.
    case respond(HTTPResponse)
    /// The handler takes the connection over (a protocol switch, such as a WebSocket upgrade):
    /// the server forgets it, and `take` gets it, not reading, with the bytes that came after
    /// the head. The taker writes its own response (`101 Switching Protocols`) and owns every
    /// limit from then on.
    case upgrade(_ take: (_ connection: any StreamConnection, _ buffered: [UInt8]) -> Void)
}

/// What an ``HTTPServer`` did since it started: read by a metrics scrape.
public struct HTTPServerStatistics: Equatable, Sendable {
    /// Connections accepted (those refused included).
    public var accepted = 0
    /// Connections refused with `503` because ``HTTPLimits/maxConnections`` were open.
    public var refused = 0
    /// Kept-alive connections waiting for a next request, closed to make room for a new one.
    public var idleClosedForRoom = 0
    /// Request heads answered by the handler.
    public var requests = 0
    /// Heads answered `400` (malformed, binary bytes, no `Host`) or `431` (too large).
    public var badRequests = 0
    /// Connections closed by a limit: a head that came too slowly (`408`), a response the
    /// client did not read, or a handshake (TLS) not completed in time.
    public var timeouts = 0

    /// No activity yet.
    public init() {}
}

/// A small HTTP/1.1 server on the loop: a listener, and connections that read request heads
/// with ``HTTPHeadParser`` and answer each with what `handler` decides, one request at a time,
/// within ``HTTPLimits``. The decisions are the handler's (a pure routing function, usually);
/// what a connection may do is ``HTTPConnectionState``'s. Loop thread only.
///
/// Bad input is answered or closed, never buffered without bound: a malformed head gets `400`,
/// a head over ``HTTPLimits/maxHeadBytes`` `431`, a head slower than
/// ``HTTPLimits/headTimeoutMilliseconds`` `408`, each followed by a close; a request with a body
/// is answered and the connection closed (the body is never read); HTTP/1.0 closes after its
/// answer unless it asked for keep-alive; a connection past ``HTTPLimits/maxConnections`` takes
/// the slot of the kept-alive connection that has waited longest for a next request, or, when
/// every open one is busy, gets `503`. Pipelined requests are answered in order, each once the answer before has left.
///
/// With `wrap`, each accepted TCP connection is read through what `wrap` makes of it (a server
/// ``TLSConnection``: HTTPS). The limits count such connections alike, and one still in its
/// handshake past ``HTTPLimits/handshakeTimeoutMilliseconds`` is closed; one past
/// ``HTTPLimits/maxConnections`` is closed without an answer (a `503` would wait for a handshake).
public final class HTTPServer {
    let loop: EventLoop
    let limits: HTTPLimits
    let handler: (HTTPRequestHead) -> HTTPReply
    private let listener: TCPListener
    /// Makes the stream read from an accepted TCP connection (TLS); nil: the TCP connection.
    private let wrap: ((TCPConnection) -> (any StreamConnection)?)?
    private var connections: [ObjectIdentifier: HTTPServerConnection] = [:]
    private var sweepTimer: Timer?
    /// Counts of what the server did (accepted, refused, answered, closed by a limit).
    public internal(set) var statistics = HTTPServerStatistics()
    /// True once ``close()`` was called.
    public private(set) var isClosed = false

    /// A server on `listener` (bound, or adopted from systemd), not accepting yet: call ``start()``.
    /// `wrap`, when given, makes the stream each accepted connection is read through (a server
    /// ``TLSConnection`` for HTTPS); it returns nil, having closed the TCP connection, to drop it.
    public init(loop: EventLoop, listener: TCPListener, limits: HTTPLimits = HTTPLimits(),
                wrap: ((TCPConnection) -> (any StreamConnection)?)? = nil,
                handler: @escaping (HTTPRequestHead) -> HTTPReply) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.listener = listener
        self.limits = limits
        self.wrap = wrap
        self.handler = handler
    }

    /// Starts accepting. Throws what `listen` throws (`EADDRINUSE` ...).
    public func start() throws(UVError) {
        try listener.listen { [unowned self] connection in self.accept(connection) }
    }

    /// The address listened on (numeric host, port); nil once closed.
    public var localAddress: (host: String, port: Int)? { listener.localAddress }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    /// Stops listening and closes every connection at once. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        listener.close()
        sweepTimer?.close()
        sweepTimer = nil
        let open = connections.values
        connections.removeAll()
        for connection in open { connection.closeNow() }
    }

    private func accept(_ tcp: TCPConnection) {
        statistics.accepted += 1
        if !isClosed, connections.count >= limits.maxConnections, let idle = oldestIdleKeptAlive() {
            // A kept-alive connection with no request under way holds its slot for nothing:
            // the newcomer gets it (browsers keep a connection open after each page's requests).
            statistics.idleClosedForRoom += 1
            idle.closeNow()
        }
        guard !isClosed, connections.count < limits.maxConnections else {
            statistics.refused += 1
            guard wrap == nil else { return tcp.close() }
            let refusal = HTTPResponse.text(503, "too many connections (\(limits.maxConnections))")
            tcp.write([refusal.encodedHead(closing: true), refusal.body])
            tcp.shutdownAndClose()
            return
        }
        tcp.setNoDelay(true)
        var stream: any StreamConnection = tcp
        if let wrap {
            guard let wrapped = wrap(tcp) else { return }
            stream = wrapped
        }
        let connection = HTTPServerConnection(stream, server: self, now: MonotonicClock.milliseconds())
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
        startSweeping()
    }

    /// The kept-alive connection that has waited longest for a next request, if any waits.
    private func oldestIdleKeptAlive() -> HTTPServerConnection? {
        var oldest: (connection: HTTPServerConnection, since: UInt64)?
        for connection in connections.values {
            guard let since = connection.state.idleKeptAliveSince, !connection.hasUnparsedInput else { continue }
            if oldest.map({ since < $0.since }) ?? true { oldest = (connection, since) }
        }
        return oldest?.connection
    }

    /// The connection closed, or was taken over: the server forgets it.
    func forget(_ connection: HTTPServerConnection) {
        connections[ObjectIdentifier(connection)] = nil
        if connections.isEmpty {
            sweepTimer?.stop()
        }
    }

    /// Every quarter of a second while connections are open: closes those whose limit ran out.
    private func startSweeping() {
        let timer = sweepTimer ?? Timer(loop: loop)
        sweepTimer = timer
        guard !timer.isActive else { return }
        timer.start(afterMilliseconds: 250, repeatMilliseconds: 250) { [unowned self] in
            let now = MonotonicClock.milliseconds()
            for connection in Array(connections.values) {
                if connection.connection.isHandshaking && connection.state.handshakeOverdue(now: now) {
                    statistics.timeouts += 1
                    connection.closeNow()
                    continue
                }
                if let expiry = connection.state.expiry(now: now) { connection.expire(expiry) }
            }
        }
    }
}
