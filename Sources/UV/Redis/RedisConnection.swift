import CHiredis

/// One asynchronous Redis connection (hiredis's async API) driven by an ``EventLoop`` through
/// hiredis's libuv adapter (`redisLibuvAttach`). Loop thread only; not `Sendable`.
///
/// Commands may be sent as soon as ``connect(to:onConnect:onDisconnect:)`` returned: hiredis
/// queues them until the connection is up, and replies come back in the order commands were
/// sent. A command's completion gets nil when the connection ended before its reply.
///
/// The connection is closed by ``close()``, by the server, or by an I/O error; in every case
/// the libuv handle is closed by the adapter, and ``EventLoop/closeAllHandlesAndDrain()``
/// closes a connection still open when the loop is torn down.
public final class RedisConnection {
    private let loop: EventLoop
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var onConnect: ((String?) -> Void)?
    private var onDisconnect: ((String?) -> Void)?
    /// Subscription handlers live as long as the connection (hiredis calls them per message).
    private var subscriptions: [ReplyBox] = []
    private var closing = false
    /// Whether the connection is up (connected and not closed).
    public private(set) var isConnected = false
    /// Whether a connection is being made or is up.
    public var isOpen: Bool { context != nil }

    /// A connection on `loop`, not connected yet.
    public init(loop: EventLoop) {
        self.loop = loop
    }

    /// Starts connecting to `endpoint` (no blocking call: `endpoint` is numeric or a path).
    /// `onConnect(nil)` once connected, or `onConnect(reason)` if connecting failed (the
    /// connection is then closed). After a successful connect, `onDisconnect(reason)` when the
    /// server or the network ended it (not after ``close()``). Returns false (and calls nothing)
    /// when hiredis could not even start, with `reason` set.
    @discardableResult
    public func connect(to endpoint: RedisEndpoint, onConnect: @escaping (String?) -> Void,
                        onDisconnect: @escaping (String?) -> Void) -> String? {
        loop.assertOnLoopThread()
        precondition(context == nil, "RedisConnection.connect while open")
        let made: UnsafeMutablePointer<redisAsyncContext>?
        switch endpoint {
        case .tcp(let host, let port): made = redisAsyncConnect(host, Int32(port))
        case .unix(let path): made = redisAsyncConnectUnix(path)
        }
        guard let ac = made else { return "out of memory" }
        if ac.pointee.err != 0 {
            let reason = Self.errorText(ac)
            redisAsyncFree(ac)
            return reason
        }
        guard pagesync_redis_attach(ac, loop.raw) == REDIS_OK else {
            redisAsyncFree(ac)
            return "cannot attach to the event loop"
        }
        ac.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisAsyncSetConnectCallback(ac) { ac, status in
            guard let ac, let me = RedisConnection.owner(ac) else { return }
            me.connected(status == REDIS_OK ? nil : RedisConnection.errorText(ac))
        }
        redisAsyncSetDisconnectCallback(ac) { ac, status in
            guard let ac, let me = RedisConnection.owner(ac) else { return }
            me.disconnected(status == REDIS_OK ? nil : RedisConnection.errorText(ac))
        }
        context = ac
        closing = false
        self.onConnect = onConnect
        self.onDisconnect = onDisconnect
        // Torn down with the loop if still open then (the adapter's handle is not ours to walk).
        loop.registerForeignCloser(ObjectIdentifier(self)) { [self] in close() }
        return nil
    }

    /// Sends one command (its arguments as bytes); `completion` gets the reply, or nil if the
    /// connection ended first. Returns false when there is no connection (nothing is called).
    @discardableResult
    public func send(_ args: [[UInt8]], completion: ((RedisReply?) -> Void)? = nil) -> Bool {
        loop.assertOnLoopThread()
        guard let ac = context, !closing, !args.isEmpty else { return false }
        let box = ReplyBox(oneShot: true, handler: completion)
        let privdata = Unmanaged.passRetained(box).toOpaque()
        let status = withArgv(args) { argc, argv, lengths in
            redisAsyncCommandArgv(ac, RedisConnection.replyCallback, privdata, argc, argv, lengths)
        }
        if status != REDIS_OK {
            Unmanaged<ReplyBox>.fromOpaque(privdata).release()
            return false
        }
        return true
    }

    /// Sends one command given as strings.
    @discardableResult
    public func send(_ args: [String], completion: ((RedisReply?) -> Void)? = nil) -> Bool {
        send(args.map { Array($0.utf8) }, completion: completion)
    }

    /// `PSUBSCRIBE pattern`: `handler` gets the confirmation and then every `pmessage` reply,
    /// and nil once when the connection ends.
    @discardableResult
    public func psubscribe(_ pattern: String, handler: @escaping (RedisReply?) -> Void) -> Bool {
        loop.assertOnLoopThread()
        guard let ac = context, !closing else { return false }
        let box = ReplyBox(oneShot: false, handler: handler)
        subscriptions.append(box)
        let privdata = Unmanaged.passUnretained(box).toOpaque()
        let status = withArgv([Array("PSUBSCRIBE".utf8), Array(pattern.utf8)]) { argc, argv, lengths in
            redisAsyncCommandArgv(ac, RedisConnection.replyCallback, privdata, argc, argv, lengths)
        }
        return status == REDIS_OK
    }

    /// Closes the connection now: pending commands' completions get nil; ``connect(to:onConnect:onDisconnect:)``'s
    /// callbacks are not called. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        guard let ac = context else { return }
        closing = true
        // hiredis's own callbacks from here on find no owner; command completions still run.
        ac.pointee.data = nil
        ended()
        redisAsyncFree(ac)  // deferred by hiredis when called from one of its callbacks
    }

    // MARK: - hiredis callbacks

    private static let replyCallback: @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, reply, privdata in
        guard let privdata else { return }
        let box = Unmanaged<ReplyBox>.fromOpaque(privdata).takeUnretainedValue()
        let value = reply.map { RedisReply(UnsafePointer($0.assumingMemoryBound(to: redisReply.self))) }
        if box.oneShot { Unmanaged<ReplyBox>.fromOpaque(privdata).release() }
        box.handler?(value)
    }

    private static func owner(_ ac: UnsafePointer<redisAsyncContext>) -> RedisConnection? {
        guard let data = ac.pointee.data else { return nil }
        return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
    }

    private static func errorText(_ ac: UnsafePointer<redisAsyncContext>) -> String {
        // redisAsyncContext.errstr points into its redisContext's errstr buffer.
        let text = ac.pointee.errstr.map { String(cString: $0) } ?? ""
        return text.isEmpty ? "connection closed" : text
    }

    private func connected(_ failure: String?) {
        let callback = onConnect
        onConnect = nil
        if let failure {
            // hiredis frees the context after this callback.
            ended()
            callback?(failure)
        } else {
            isConnected = true
            callback?(nil)
        }
    }

    private func disconnected(_ reason: String?) {
        let callback = closing ? nil : onDisconnect
        ended()
        callback?(reason ?? "connection closed")
    }

    private func ended() {
        context = nil
        isConnected = false
        onConnect = nil
        onDisconnect = nil
        // `subscriptions` is kept: hiredis may still call those handlers (with nil) while it
        // frees the context, and a few bytes per outage are not worth the risk.
        loop.unregisterForeignCloser(ObjectIdentifier(self))
    }
}

/// What a command's reply goes to.
private final class ReplyBox {
    let oneShot: Bool
    let handler: ((RedisReply?) -> Void)?
    init(oneShot: Bool, handler: ((RedisReply?) -> Void)?) {
        self.oneShot = oneShot
        self.handler = handler
    }
}
