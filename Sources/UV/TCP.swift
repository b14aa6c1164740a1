import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening TCP socket (`uv_tcp_t` + `uv_listen`). Loop thread only; not `Sendable`.
///
/// The wrapper stays alive while the handle is open (the handle retains it), so you may drop your
/// reference; call `close()` to stop listening and release it.
public final class TCPListener: UVHandleOwner {
    private var handle: OwnedHandle<uv_tcp_t>
    private var onConnection: ((TCPConnection) -> Void)?
    /// True once `close()` was called.
    public var isClosed: Bool { handle.isClosed }
    private var loop: EventLoop { handle.loop }

    /// Creates a TCP socket bound to `host:port`. `host` is an IPv4 or IPv6 literal (brackets
    /// allowed) or `"localhost"` (= 127.0.0.1); `port` 0 picks a free port (see `localAddress`).
    /// Throws `UVError.invalidArgument` for other hosts or ports. Note that libuv reports
    /// `EADDRINUSE` from `listen`, not from here.
    public init(loop: EventLoop, host: String, port: Int) throws(UVError) {
        loop.assertOnLoopThread()
        guard let address = SocketAddress(host: host, port: port) else { throw .invalidArgument }
        var handle = try OwnedHandle<uv_tcp_t>(loop: loop, initialize: uv_tcp_init)
        try handle.setUp { handle in address.withSockaddr { uv_tcp_bind(handle, $0, 0) } }
        self.handle = handle
        handle.attach(self)
    }

    /// Adopts an already bound (typically already listening) socket, e.g. one passed by systemd
    /// socket activation (fd 3). Throws when `uv_tcp_open` fails (not a socket, bad fd).
    public init(loop: EventLoop, adopting fd: Int32) throws(UVError) {
        var handle = try OwnedHandle<uv_tcp_t>(loop: loop, initialize: uv_tcp_init)
        try handle.setUp { uv_tcp_open($0, uv_os_sock_t(fd)) }
        self.handle = handle
        handle.attach(self)
    }

    /// Starts listening. Each accepted connection is handed to `onConnection` (not reading yet).
    /// Accept errors (e.g. `EMFILE`) are skipped; the listener keeps listening.
    /// Throws e.g. `EADDRINUSE`, or `EINVAL` after `close()`.
    public func listen(backlog: Int32 = 511, _ onConnection: @escaping (TCPConnection) -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        guard !isClosed else { throw .invalidArgument }
        self.onConnection = onConnection
        let result = uv_listen(asStream(handle.pointer), backlog) { server, status in
            guard status == 0, let server,
                  let listener = HandleMemory.owner(of: asHandle(server), as: TCPListener.self)
            else { return }
            listener.accept()
        }
        if result < 0 {
            self.onConnection = nil
            throw UVError(code: result)
        }
    }

    private func accept() {
        guard !isClosed, var client = try? OwnedHandle<uv_tcp_t>(loop: loop, initialize: uv_tcp_init) else { return }
        guard (try? client.setUp({ uv_accept(asStream(handle.pointer), asStream($0)) })) != nil else { return }
        // The connection's StreamIO owns the handle from here (and closes it).
        let connection = TCPConnection(loop: loop, handle: client.pointer)
        connection.refreshPeer()
        onConnection?(connection)
    }

    /// The bound address (numeric host, port), e.g. to learn the port picked for port 0.
    /// Nil after `close()` or when the socket is not bound.
    public var localAddress: (host: String, port: Int)? {
        guard !isClosed, let address = SocketAddress.of(handle.pointer, peer: false) else { return nil }
        return (address.host, address.port)
    }

    /// Stops listening and closes the socket. Idempotent. Already accepted connections are unaffected.
    public func close() {
        if handle.close() { onConnection = nil }
    }
}

/// A connected TCP stream. Loop thread only; not `Sendable`.
///
/// The connection stays open (the libuv handle retains its state) until `close()` or
/// `shutdownAndClose()`, even if you drop every reference to this object: close it when done,
/// including after `.eof` or `.error`. `EventLoop.closeAllHandlesAndDrain()` closes leftovers.
///
/// Writes never block: `uv_try_write` first, and whatever the kernel does not take is copied and
/// queued (`writeQueueSize`). A failed write (`EPIPE`, `ECONNRESET`) never crashes: the first
/// failure stops reading, drops all later writes, and is delivered once as `.error` to the read
/// callback on a later loop turn (or when `startReading` is next called). The connection stays
/// open until you call `close()`.
public final class TCPConnection {
    /// What the read callback receives (shared with `TTY`).
    public typealias ReadEvent = StreamReadEvent

    private let io: StreamIO
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private var peer: String = "?"
    private var loopbackPeer = false

    init(loop: EventLoop, handle: UnsafeMutablePointer<uv_tcp_t>) {
        self.handle = handle
        self.io = StreamIO(loop: loop, stream: asStream(handle), isSocket: true)
    }

    func refreshPeer() {
        if let address = SocketAddress.of(handle, peer: true) {
            peer = address.description
            loopbackPeer = address.isLoopback
        }
    }

    /// Connects to `host:port` and calls `done` on the loop thread, always asynchronously.
    /// `host` may be an IP literal, `"localhost"` (= 127.0.0.1) or a name resolved with
    /// `uv_getaddrinfo` (the first address is used). On failure no connection is left open.
    public static func connect(loop: EventLoop, host: String, port: Int,
                               _ done: @escaping (Result<TCPConnection, UVError>) -> Void) {
        loop.assertOnLoopThread()
        if let address = SocketAddress(host: host, port: port) {
            connect(loop: loop, address: address, done)
            return
        }
        guard (0...65535).contains(port), !host.isEmpty else {
            deferred(loop) { done(.failure(.invalidArgument)) }
            return
        }
        let request = HandleMemory.allocateRequest(uv_getaddrinfo_t.self)
        let context = ResolveContext(loop: loop, port: port, done: done)
        request.pointee.data = Unmanaged.passRetained(context).toOpaque()
        var hints = addrinfo()
        hints.ai_socktype = 1  // SOCK_STREAM (hiredis's module map takes <sys/socket.h>, hiding the name)
        hints.ai_family = AF_UNSPEC
        let result = uv_getaddrinfo(loop.raw, request, { request, status, info in
            guard let request, let data = request.pointee.data else { return }
            let context = Unmanaged<ResolveContext>.fromOpaque(data).takeRetainedValue()
            HandleMemory.freeRequest(request)
            defer { uv_freeaddrinfo(info) }
            var address: SocketAddress?
            var entry = info
            while address == nil, let current = entry {
                if let sockaddr = current.pointee.ai_addr {
                    address = SocketAddress(pointer: sockaddr)
                }
                entry = current.pointee.ai_next
            }
            guard status == 0, var found = address else {
                context.done(.failure(UVError(code: status < 0 ? status : UV_EAI_NONAME.rawValue)))
                return
            }
            switch found {
            case .v4(var a): a.sin_port = UInt16(context.port).bigEndian; found = .v4(a)
            case .v6(var a): a.sin6_port = UInt16(context.port).bigEndian; found = .v6(a)
            }
            TCPConnection.connect(loop: context.loop, address: found, context.done)
        }, host, nil, &hints)
        if result < 0 {
            Unmanaged<ResolveContext>.fromOpaque(request.pointee.data!).release()
            HandleMemory.freeRequest(request)
            deferred(loop) { done(.failure(UVError(code: result))) }
        }
    }

    private static func connect(loop: EventLoop, address: SocketAddress,
                                _ done: @escaping (Result<TCPConnection, UVError>) -> Void) {
        let handle: OwnedHandle<uv_tcp_t>
        do {
            handle = try OwnedHandle(loop: loop, initialize: uv_tcp_init)
        } catch {
            deferred(loop) { done(.failure(error)) }
            return
        }
        // The connection's StreamIO owns the handle from here (and closes it).
        let connection = TCPConnection(loop: loop, handle: handle.pointer)
        let request = HandleMemory.allocateRequest(uv_connect_t.self)
        request.pointee.data = Unmanaged.passRetained(ConnectContext(connection: connection, done: done)).toOpaque()
        let result = address.withSockaddr { sockaddr in
            uv_tcp_connect(request, handle.pointer, sockaddr) { request, status in
                guard let request, let data = request.pointee.data else { return }
                let context = Unmanaged<ConnectContext>.fromOpaque(data).takeRetainedValue()
                HandleMemory.freeRequest(request)
                if status < 0 || context.connection.io.isClosed {
                    context.connection.close()
                    context.done(.failure(UVError(code: status < 0 ? status : UV_ECANCELED.rawValue)))
                } else {
                    context.connection.refreshPeer()
                    context.done(.success(context.connection))
                }
            }
        }
        if result < 0 {
            Unmanaged<ConnectContext>.fromOpaque(request.pointee.data!).release()
            HandleMemory.freeRequest(request)
            connection.close()
            deferred(loop) { done(.failure(UVError(code: result))) }
        }
    }

    /// Runs `body` on a later turn of `loop` (so callbacks are never called re-entrantly).
    private static func deferred(_ loop: EventLoop, _ body: @escaping () -> Void) {
        let box = UncheckedBox(body)
        loop.execute { box.value() }
    }

    /// Starts reading; `onRead` gets `.data` chunks (buffer valid only during the call), then at
    /// most one `.eof` or `.error`. Replaces a previous callback. No effect after `close()`.
    public func startReading(_ onRead: @escaping (ReadEvent) -> Void) { io.startReading(onRead) }

    /// Stops reading (`uv_read_stop`), e.g. for back-pressure. The callback is kept for a later
    /// `startReading`.
    public func stopReading() { io.stopReading() }

    /// True while reading is started.
    public var isReading: Bool { io.isReading }

    /// True once `close()` or `shutdownAndClose()` finished closing (writes are ignored from then on).
    public var isClosed: Bool { io.isClosed }

    /// Writes `bytes` in order after everything written before. `uv_try_write` first; whatever the
    /// kernel does not take is copied and queued with `uv_write` (freed in the write callback).
    /// Ignored after close, after `shutdownAndClose()` and after a write failure.
    public func write(_ bytes: UnsafeRawBufferPointer) { io.write(bytes) }

    /// Writes `bytes`; see `write(_: UnsafeRawBufferPointer)`.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { io.write($0) } }

    /// Writes several buffers as one gathered write, in order (see ``write(gathering:)``).
    public func write(_ parts: [[UInt8]]) {
        withGatheredBytes(parts) { io.write(gathering: $0) }
    }

    /// Writes the bytes `parts` point at as one gathered write, in order; they need to stay
    /// valid only during the call. Up to ``smallGatherLimit`` bytes in all are copied into one
    /// buffer and written as one (a `write(2)` when nothing is queued); more go out in
    /// `uv_try_write`s of up to 16 buffers.
    public func write(gathering parts: UnsafeBufferPointer<UnsafeRawBufferPointer>) { io.write(gathering: parts) }

    /// Gathered writes of at most this many bytes in all are copied into one buffer first.
    public static var smallGatherLimit: Int { StreamIO.smallGatherLimit }

    /// Bytes queued in libuv, not yet handed to the kernel. 0 after close.
    public var writeQueueSize: Int { io.writeQueueSize }

    /// Bytes read from the socket since the connection was made (still valid after close).
    public var bytesRead: UInt64 { io.bytesRead }

    /// Bytes accepted by the writes since the connection was made, sent or queued (still
    /// valid after close).
    public var bytesWritten: UInt64 { io.bytesWritten }

    /// Memory the queued output holds: its bytes plus about 256 bytes of bookkeeping for each
    /// queued write. 0 after close.
    public var queuedOutputMemory: Int { io.queuedMemory }

    /// This connection's stream for ``StreamWriter``.
    var writer: StreamWriter { StreamWriter(io) }

    /// Caps the bytes the kernel holds unsent for this connection (`TCP_NOTSENT_LOWAT`).
    /// A write beyond the cap is queued in libuv instead, so a peer that stopped reading
    /// shows up as ``writeQueueSize`` above 0, and ``onWritesDrained`` says when it caught up.
    public func setNotSentLowWatermark(_ bytes: Int) {
        guard !io.isClosed else { return }
        var fd = uv_os_fd_t(-1)
        guard uv_fileno(asHandle(io.stream), &fd) == 0 else { return }
        var value = Int32(clamping: bytes)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), Self.tcpNotSentLowat, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// `TCP_NOTSENT_LOWAT` (linux/tcp.h).
    static let tcpNotSentLowat: Int32 = 25

    /// Called on the loop thread when all queued writes completed (`writeQueueSize` dropped to 0
    /// after having been above 0). Not called for writes that completed inside `write` itself,
    /// nor after a write failure or close.
    public var onWritesDrained: (() -> Void)? {
        get { io.onWritesDrained }
        set { io.onWritesDrained = newValue }
    }

    /// Enables TCP keep-alive with the given initial delay in seconds; 0 or less disables it.
    public func setKeepAlive(seconds: Int) {
        guard !io.isClosed else { return }
        _ = uv_tcp_keepalive(handle, seconds > 0 ? 1 : 0, UInt32(max(0, seconds)))
    }

    /// Enables or disables Nagle's algorithm being off (`TCP_NODELAY`).
    public func setNoDelay(_ on: Bool) {
        guard !io.isClosed else { return }
        _ = uv_tcp_nodelay(handle, on ? 1 : 0)
    }

    /// The peer's address as "127.0.0.1:5555" or "[::1]:5555", captured when the connection was
    /// established ("?" if unknown). Still valid after close.
    public var peerDescription: String { peer }

    /// True when the peer's address is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x),
    /// captured with ``peerDescription``. False when unknown.
    public var peerIsLoopback: Bool { loopbackPeer }

    /// The local address (numeric host, port); nil after close.
    public var localAddress: (host: String, port: Int)? {
        guard !io.isClosed, let address = SocketAddress.of(handle, peer: false) else { return nil }
        return (address.host, address.port)
    }

    /// Closes now: idempotent; pending queued writes are cancelled and their memory freed; the
    /// read callback and `onWritesDrained` are dropped (no further calls). The handle memory is
    /// freed in libuv's close callback.
    public func close() { io.close() }

    /// Sends a FIN once what was written has left, and goes on reading (a half-close): the peer
    /// reads the end of the output, and what it still sends arrives as before, until `.eof`.
    /// Later writes are ignored. Close with ``shutdownAndClose()`` or ``close()``.
    public func shutdownWrites() { io.shutdownWrites() }

    /// Stops reading, sends what was written and a FIN, and closes: at once when the kernel
    /// already took everything, else after the queued writes (`uv_shutdown`). Later writes are
    /// ignored. Idempotent.
    public func shutdownAndClose() { io.shutdownAndClose() }
}

private final class ConnectContext {
    let connection: TCPConnection
    let done: (Result<TCPConnection, UVError>) -> Void
    init(connection: TCPConnection, done: @escaping (Result<TCPConnection, UVError>) -> Void) {
        self.connection = connection
        self.done = done
    }
}

private final class ResolveContext {
    let loop: EventLoop
    let port: Int
    let done: (Result<TCPConnection, UVError>) -> Void
    init(loop: EventLoop, port: Int, done: @escaping (Result<TCPConnection, UVError>) -> Void) {
        self.loop = loop
        self.port = port
        self.done = done
    }
}
