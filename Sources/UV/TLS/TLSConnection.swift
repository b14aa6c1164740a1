/// A TLS session over a ``TCPConnection``, on the loop thread: a ``TLSEngine`` encrypts what is
/// written and decrypts what is read, with no extra thread and no blocking handshake. It has
/// the contract of ``TCPConnection`` (see ``StreamConnection``), with these additions:
///
/// - Writes made before the handshake completes wait (they count in ``writeQueueSize``) and are
///   sent when it completes; ``onWritesDrained`` follows once they left.
/// - A failed handshake or a bad record is delivered as `.error` whose description is one line
///   ("certificate has expired", "TLS handshake failed: wrong version number"), after the alert
///   was sent. close_notify from the peer, or a plain TCP end of file, is `.eof`; as after a
///   TCP half-close, what is written after it is still sent, until ``shutdownAndClose()``
///   answers with close_notify.
/// - ``shutdownAndClose()`` sends close_notify first; when called mid-handshake with writes
///   waiting, it first completes the handshake so that they are delivered.
///
/// Loop thread only; not `Sendable`. Like a ``TCPConnection`` it stays open until closed.
public final class TLSConnection: StreamConnection {
    /// The underlying TCP connection (for addresses and socket options).
    public let tcp: TCPConnection
    private let loop: EventLoop
    private let engine: TLSEngine
    private var onRead: ((StreamReadEvent) -> Void)?
    private var userReading = false
    /// `.eof` or `.error` was delivered (or is owed): nothing more is read.
    private var finished = false
    private var undeliveredError: UVError?
    private var shutdownRequested = false
    private var drainScheduled = false
    /// A client's `connect` callback, called once the handshake completed or failed.
    private var handshakeDone: ((Result<TLSConnection, UVError>) -> Void)?

    /// Called when ``writeQueueSize`` dropped to 0 after having been above 0.
    public var onWritesDrained: (() -> Void)?

    /// Starts a TLS session on an accepted (`context.isServer`) or connected (client) TCP
    /// connection. A client needs `serverName`, the name the certificate must match. The
    /// handshake starts at once: the connection reads until it completes, whether or not
    /// ``startReading(_:)`` was called. Throws when OpenSSL cannot create the session (the TCP
    /// connection is then closed).
    public init(_ tcp: TCPConnection, loop: EventLoop, context: TLSContext, serverName: String? = nil) throws(TLSError) {
        loop.assertOnLoopThread()
        self.tcp = tcp
        self.loop = loop
        do throws(TLSError) {
            engine = try TLSEngine(context: context, serverName: serverName, outputScratch: loop.tlsOutputScratch)
        } catch {
            tcp.close()
            throw error
        }
        tcp.onWritesDrained = { [weak self] in self?.onWritesDrained?() }
        flushOutput()
        tcp.startReading { [self] event in self.tcpEvent(event) }
    }

    /// Connects to `host:port` over TCP, then completes a TLS handshake verifying the server's
    /// certificate for `serverName` (default `host`) as `context` says. `done` runs on the loop
    /// thread, always asynchronously: with the connection (not reading yet), or with an error
    /// whose description is one line (e.g. "certificate is not for example.org (wrong host name)").
    public static func connect(loop: EventLoop, host: String, port: Int, context: TLSContext, serverName: String? = nil,
                               _ done: @escaping (Result<TLSConnection, UVError>) -> Void) {
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            switch result {
            case .failure(let error):
                done(.failure(error))
            case .success(let tcp):
                var name = serverName ?? host
                if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
                do throws(TLSError) {
                    let connection = try TLSConnection(tcp, loop: loop, context: context, serverName: name)
                    connection.handshakeDone = done
                } catch {
                    done(.failure(UVError(tls: error)))
                }
            }
        }
    }

    /// Bytes read from the TCP connection (encrypted) since it was made.
    public var bytesRead: UInt64 { tcp.bytesRead }

    /// Bytes written to the TCP connection (encrypted) since it was made.
    public var bytesWritten: UInt64 { tcp.bytesWritten }

    /// True once the handshake has completed, and from then on (also after close).
    public private(set) var completedHandshake = false

    /// True once the handshake completed (and until the session ends).
    public var isEstablished: Bool { engine.state == .established }

    /// True while the handshake is under way (neither completed nor failed).
    public var isHandshaking: Bool { engine.state == .handshaking }

    /// The negotiated protocol, e.g. "TLSv1.3".
    public var protocolVersion: String { engine.protocolVersion }

    // MARK: Reading

    /// Starts delivering plaintext; see ``TCPConnection/startReading(_:)``.
    public func startReading(_ onRead: @escaping (StreamReadEvent) -> Void) {
        loop.assertOnLoopThread()
        guard !tcp.isClosed, !shutdownRequested else { return }
        self.onRead = onRead
        userReading = true
        if let error = undeliveredError {
            undeliveredError = nil
            scheduleOnLoop { $0.onRead?(.error(error)) }
            return
        }
        guard !finished else { return }
        tcp.startReading { [self] event in self.tcpEvent(event) }
        if engine.hasUnreadInput { scheduleDrain() }
    }

    /// Stops delivering plaintext (the handshake, if under way, continues).
    public func stopReading() {
        loop.assertOnLoopThread()
        userReading = false
        if engine.state != .handshaking { tcp.stopReading() }
    }

    /// True while reading is started.
    public var isReading: Bool { userReading }

    /// True once closed.
    public var isClosed: Bool { tcp.isClosed }

    private func tcpEvent(_ event: StreamReadEvent) {
        switch event {
        case .data(let bytes):
            engine.receive(bytes)
            pump()
        case .eof:
            if engine.state == .handshaking {
                fail(UVError(tls: TLSError("connection closed during the TLS handshake")))
            } else {
                deliver(.eof)
            }
        case .error(let error):
            fail(error)
        }
    }

    /// Advances the handshake and hands decrypted bytes to the reader while it reads.
    private func pump() {
        guard !tcp.isClosed else { return }
        if engine.state == .handshaking {
            let hadWaiting = engine.pendingPlaintextCount > 0
            if let error = engine.continueHandshake() {
                fail(UVError(tls: error))
                return
            }
            flushOutput()
            guard engine.state == .established else { return }
            handshakeCompleted(hadWaiting: hadWaiting)
            if tcp.isClosed || shutdownRequested { return }
        }
        guard userReading, !finished, engine.state == .established else { return }
        let outcome = engine.read(into: loop.readBuffer) { chunk in
            self.onRead?(.data(chunk))
            return self.userReading && !self.finished && !self.tcp.isClosed
        }
        flushOutput()
        switch outcome {
        case .needsInput, .paused: break
        case .peerClosed: deliver(.eof)
        case .failed(let error): fail(UVError(tls: error))
        }
    }

    private func handshakeCompleted(hadWaiting: Bool) {
        completedHandshake = true
        if let done = handshakeDone {
            handshakeDone = nil
            if !userReading { tcp.stopReading() }
            done(.success(self))
        } else if !userReading && !shutdownRequested {
            tcp.stopReading()
        }
        if shutdownRequested {
            finishShutdown()
        } else if hadWaiting && tcp.writeQueueSize == 0 && !tcp.isClosed {
            onWritesDrained?()
        }
    }

    private func scheduleDrain() {
        guard !drainScheduled else { return }
        drainScheduled = true
        scheduleOnLoop { connection in
            connection.drainScheduled = false
            connection.pump()
        }
    }

    private func scheduleOnLoop(_ body: @escaping (TLSConnection) -> Void) {
        let box = UncheckedBox((self, body))
        loop.execute { box.value.1(box.value.0) }
    }

    private func fail(_ error: UVError) {
        guard !finished else { return }
        flushOutput()  // the alert, if any
        if let done = handshakeDone {
            handshakeDone = nil
            finished = true
            tcp.close()
            done(.failure(error))
            return
        }
        if shutdownRequested {
            finished = true
            tcp.close()
            return
        }
        if onRead == nil {
            undeliveredError = error
            finished = true
            tcp.stopReading()
            return
        }
        deliver(.error(error))
    }

    /// Hands `event` to the reader; `.eof` and `.error` at most once, and nothing after them.
    private func deliver(_ event: StreamReadEvent) {
        switch event {
        case .data:
            onRead?(event)
        case .eof, .error:
            guard !finished else { return }
            finished = true
            tcp.stopReading()
            onRead?(event)
        }
    }

    // MARK: Writing

    /// Encrypts and writes `bytes` (or keeps them until the handshake completed).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        encryptAndWrite { engine.send(bytes) }
    }

    /// Encrypts and writes `bytes`.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    /// Encrypts and writes several buffers in order, in one write to the socket.
    public func write(_ parts: [[UInt8]]) {
        encryptAndWrite { for part in parts { part.withUnsafeBytes { engine.send($0) } } }
    }

    /// Encrypts and writes the bytes `parts` point at, in order, in one write to the socket.
    public func write(gathering parts: UnsafeBufferPointer<UnsafeRawBufferPointer>) {
        encryptAndWrite { for part in parts { engine.send(part) } }
    }

    /// Hands the engine what `send` gives it (kept until the handshake completed), then writes
    /// what it encrypted; nothing once closed or shutting down.
    private func encryptAndWrite(_ send: () -> Void) {
        loop.assertOnLoopThread()
        guard !tcp.isClosed, !shutdownRequested else { return }
        send()
        flushOutput()
    }

    private func flushOutput() {
        guard !tcp.isClosed else {
            engine.takeOutput { _ in }  // nowhere to send it; frees the loop's scratch
            return
        }
        engine.takeOutput { tcp.write($0) }
    }

    /// Plaintext waiting for the handshake plus encrypted bytes queued in libuv.
    public var writeQueueSize: Int { tcp.isClosed ? 0 : engine.pendingPlaintextCount + tcp.writeQueueSize }

    /// Plaintext waiting for the handshake plus what the encrypted output queued in libuv holds
    /// (``TCPConnection/queuedOutputMemory``).
    public var queuedOutputMemory: Int { tcp.isClosed ? 0 : engine.pendingPlaintextCount + tcp.queuedOutputMemory }

    /// See ``TCPConnection/setNotSentLowWatermark(_:)``.
    public func setNotSentLowWatermark(_ bytes: Int) { tcp.setNotSentLowWatermark(bytes) }

    // MARK: Socket

    /// See ``TCPConnection/setKeepAlive(seconds:)``.
    public func setKeepAlive(seconds: Int) { tcp.setKeepAlive(seconds: seconds) }
    /// See ``TCPConnection/setNoDelay(_:)``.
    public func setNoDelay(_ on: Bool) { tcp.setNoDelay(on) }
    /// The peer's address, as ``TCPConnection/peerDescription``.
    public var peerDescription: String { tcp.peerDescription }
    /// See ``TCPConnection/peerIsLoopback``.
    public var peerIsLoopback: Bool { tcp.peerIsLoopback }
    /// Always true.
    public var isEncrypted: Bool { true }

    // MARK: Closing

    /// Closes now, without close_notify; see ``TCPConnection/close()``.
    public func close() {
        loop.assertOnLoopThread()
        onRead = nil
        onWritesDrained = nil
        handshakeDone = nil
        userReading = false
        tcp.close()
    }

    /// Sends what was written and close_notify, then closes (see the type's notes).
    public func shutdownAndClose() {
        loop.assertOnLoopThread()
        guard !tcp.isClosed, !shutdownRequested else { return }
        shutdownRequested = true
        onRead = nil
        userReading = false
        if engine.state == .handshaking && engine.pendingPlaintextCount > 0 && !finished {
            return  // pump() finishes the shutdown once the handshake completed
        }
        finishShutdown()
    }

    /// The half-close of TLS: close_notify after what was written, then a FIN once it left.
    /// Reading goes on until the peer's end (`.eof`) or an error, but what the peer still sends
    /// is dropped, not decrypted (the session is over for this side). Later writes are ignored.
    /// While the handshake is under way it is ``shutdownAndClose()``.
    public func shutdownWrites() {
        loop.assertOnLoopThread()
        guard !tcp.isClosed, !shutdownRequested else { return }
        if engine.state == .handshaking { return shutdownAndClose() }
        engine.shutdown()
        flushOutput()
        tcp.shutdownWrites()
    }

    private func finishShutdown() {
        engine.shutdown()
        flushOutput()
        tcp.shutdownAndClose()
    }
}
