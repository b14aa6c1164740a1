import CWslay

/// A WebSocket (RFC 6455) over a stream whose opening handshake was answered with `101`, as a
/// line stream: each text message the peer sends is read as one line (its bytes and an LF),
/// and each line written is sent as one text message (without its LF). wslay frames both
/// ways, driven by this class on the loop thread: it hands wslay the bytes read and writes
/// what wslay queues, so nothing blocks and nothing runs elsewhere. It has the contract of
/// ``TCPConnection`` (see ``StreamConnection``), with these additions:
///
/// - Fragmented messages are reassembled; pings are answered with pongs; a masked frame is
///   required (an unmasked one closes with 1002, as does any other framing error).
/// - A text message over `maxMessageBytes` closes with 1009, a binary message with 1003, a
///   text message that is not UTF-8 or holds a line break before its end with 1007. Each
///   close is sent, the connection is then read as ended (`.eof`), and closed.
/// - The peer's close frame is answered (wslay echoes its code) and read as `.eof`.
/// - ``shutdownAndClose()`` sends what was written, then a close frame with 1000, then closes.
///
/// Loop thread only; not `Sendable`.
public final class WebSocketConnection: StreamConnection {
    /// The stream under the WebSocket (TCP, or TLS for `wss://`).
    public let base: any StreamConnection
    /// `base` when it is plain TCP: asked without dynamic dispatch on the fan-out's path.
    private let tcp: TCPConnection?
    private let loop: EventLoop
    private var context: OpaquePointer?
    /// Bytes read from `base` that wslay has not taken yet, from `inputStart` on.
    private var input: [UInt8] = []
    private var inputStart = 0
    /// Lines received (each with its LF) not yet handed to the reader.
    private var received: [UInt8] = []
    /// Bytes written after the last LF: the start of a line not complete yet.
    private var partialLine: [UInt8] = []
    private var onRead: ((StreamReadEvent) -> Void)?
    private var userReading = false
    private var deliveryScheduled = false
    /// The WebSocket reads nothing more (a close frame came, or one was sent for bad input):
    /// `.eof` is owed to the reader once `received` is handed over.
    private var inputOver = false
    private var eofDelivered = false
    private var shutdownRequested = false
    /// While wslay sends (``flush()``): the frames' bytes, written to the stream at once after
    /// it (a frame comes as its header, then its payload: two writes, two packets, otherwise).
    private var sending: [UInt8] = []
    private var inSend = false
    /// `base` was told to flush and close (``endBase()``).
    private var baseEnding = false

    /// Called when ``writeQueueSize`` dropped to 0 after having been above 0.
    public var onWritesDrained: (() -> Void)?

    /// The close code sent for bad input (1002, 1003, 1007, 1009), or nil.
    public private(set) var failureCode: UInt16?

    /// Which end of the WebSocket this is.
    public enum Role: Sendable {
        /// The server's end: the peer's frames must be masked, its own are not.
        case server
        /// A client's end (``WebSocketClient``): its frames are masked, the peer's must not be.
        case client
    }

    /// A WebSocket on `base`, whose `101` answer was written (or, for a client, read);
    /// `buffered` are the bytes read after the handshake's head (frames sent early). Not
    /// reading until ``startReading(_:)``.
    public init(_ base: any StreamConnection, loop: EventLoop, maxMessageBytes: Int, buffered: [UInt8] = [], role: Role = .server) {
        loop.assertOnLoopThread()
        self.base = base
        self.tcp = base as? TCPConnection
        self.loop = loop
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { _, buffer, length, _, user in
            WebSocketConnection.from(user).supply(buffer, length)
        }
        callbacks.send_callback = { _, data, length, _, user in
            WebSocketConnection.from(user).transmit(data, length)
        }
        callbacks.on_msg_recv_callback = { _, argument, user in
            guard let argument else { return }
            WebSocketConnection.from(user).message(argument.pointee)
        }
        callbacks.genmask_callback = { _, buffer, length, _ in
            // A client's masking keys: unpredictable, as RFC 6455 asks (10.3).
            guard let buffer else { return -1 }
            var generator = SystemRandomNumberGenerator()
            for i in 0..<length { buffer[i] = UInt8.random(in: 0...255, using: &generator) }
            return 0
        }
        var created: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        let status = role == .server ? wslay_event_context_server_init(&created, &callbacks, user)
                                     : wslay_event_context_client_init(&created, &callbacks, user)
        if status == 0 {
            context = created
            wslay_event_config_set_max_recv_msg_length(created, UInt64(max(1, maxMessageBytes)))
        }
        // Unowned, not weak: a weak reference would put every retain of this object (one per
        // line the fan-out writes) on the runtime's slow path. `deinit` takes both callbacks
        // away from `base`, so neither outlives this object.
        base.onWritesDrained = { [unowned self] in self.onWritesDrained?() }
        input = buffered
        if context == nil { base.close() }
    }

    deinit {
        // `base`'s callbacks hold this object unowned: none may run after it. A base still
        // sending its last bytes (``endBase()``) has dropped its reader already; one left open
        // without a close is closed.
        base.onWritesDrained = nil
        if !baseEnding && !base.isClosed { base.close() }
        if let context { wslay_event_context_free(context) }
    }

    /// `base` flushes what was written and closes (its reader dropped).
    private func endBase() {
        baseEnding = true
        base.shutdownAndClose()
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> WebSocketConnection {
        Unmanaged<WebSocketConnection>.fromOpaque(user!).takeUnretainedValue()
    }

    // MARK: wslay's callbacks

    /// wslay asks for input: what was read and not taken yet, or "would block".
    private func supply(_ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int) -> Int {
        let available = input.count - inputStart
        guard available > 0, let buffer else {
            wslay_event_set_error(context, WSLAY_ERR_WOULDBLOCK.rawValue)
            return -1
        }
        let count = min(available, length)
        input.withUnsafeBufferPointer { all in
            buffer.update(from: all.baseAddress! + inputStart, count: count)
        }
        inputStart += count
        if inputStart == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 65536)
            inputStart = 0
        }
        return count
    }

    /// wslay sends a frame's bytes: all of them are taken, gathered for ``flush()``'s one write
    /// (the stream queues what the kernel does not take).
    private func transmit(_ data: UnsafePointer<UInt8>?, _ length: Int) -> Int {
        guard !base.isClosed, let data else {
            wslay_event_set_error(context, WSLAY_ERR_CALLBACK_FAILURE.rawValue)
            return -1
        }
        if inSend {
            sending.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        } else {
            base.write(UnsafeRawBufferPointer(start: data, count: length))
        }
        return length
    }

    /// A whole message came (fragments reassembled).
    private func message(_ argument: wslay_event_on_msg_recv_arg) {
        guard failureCode == nil else { return }
        switch argument.opcode {
        case UInt8(WSLAY_TEXT_FRAME.rawValue):
            var bytes = UnsafeBufferPointer(start: argument.msg, count: argument.msg_length)
            // One trailing line break is allowed (a client that sends lines as typed).
            if bytes.last == 0x0A { bytes = UnsafeBufferPointer(rebasing: bytes.dropLast()) }
            if bytes.last == 0x0D { bytes = UnsafeBufferPointer(rebasing: bytes.dropLast()) }
            guard String(validating: bytes, as: UTF8.self) != nil else {
                return fail(1007, "text message is not UTF-8")
            }
            guard !bytes.contains(0x0A), !bytes.contains(0x0D) else {
                return fail(1007, "one protocol line per message: no line break inside")
            }
            received.append(contentsOf: bytes)
            received.append(0x0A)
        case UInt8(WSLAY_BINARY_FRAME.rawValue):
            fail(1003, "binary messages are not accepted: send protocol lines as text")
        default:
            break  // close (answered by wslay, seen after recv), ping (answered), pong
        }
    }

    /// Closes the WebSocket for bad input with `code`: the close frame is queued, nothing more
    /// is read.
    private func fail(_ code: UInt16, _ reason: String) {
        failureCode = code
        let text = Array(reason.utf8.prefix(120))
        _ = wslay_event_queue_close(context, code, text, text.count)
        wslay_event_shutdown_read(context)
    }

    // MARK: Reading

    /// Starts delivering lines; see ``TCPConnection/startReading(_:)``.
    public func startReading(_ onRead: @escaping (StreamReadEvent) -> Void) {
        loop.assertOnLoopThread()
        guard !base.isClosed, !shutdownRequested else { return }
        self.onRead = onRead
        userReading = true
        if !received.isEmpty || (inputOver && !eofDelivered) || input.count > inputStart {
            scheduleDelivery()
        }
        if !inputOver { base.startReading { [unowned self] event in self.baseEvent(event) } }
    }

    /// Stops delivering lines (what was read waits, and reading from the stream stops).
    public func stopReading() {
        loop.assertOnLoopThread()
        userReading = false
        base.stopReading()
    }

    /// True while reading is started.
    public var isReading: Bool { userReading }

    /// True once closed.
    public var isClosed: Bool { base.isClosed }

    private func baseEvent(_ event: StreamReadEvent) {
        switch event {
        case .data(let bytes):
            input.append(contentsOf: bytes)
            pump()
        case .eof:
            pump(streamEnded: true)
        case .error(let error):
            inputOver = true
            eofDelivered = true
            base.stopReading()
            deliverReceived()
            onRead?(.error(error))
        }
    }

    /// Hands wslay what was read, sends what it queued (pongs, close answers), gives the reader
    /// the lines, and ends the WebSocket when wslay reads no more.
    private func pump(streamEnded: Bool = false) {
        guard let context, !base.isClosed else { return }
        // After a failed recv wslay must not be called to read again.
        if !inputOver && (wslay_event_recv(context) != 0 || wslay_event_get_read_enabled(context) == 0) {
            inputOver = true
        }
        if streamEnded { inputOver = true }
        flush()
        deliverReceived()
        if inputOver {
            base.stopReading()
            if !eofDelivered, userReading {
                eofDelivered = true
                onRead?(.eof)
            }
            // The close handshake is over (or the connection failed): nothing more to say.
            if !base.isClosed, failureCode != nil || wslay_event_get_close_sent(context) != 0 {
                endBase()
            }
        }
    }

    private func deliverReceived() {
        guard userReading, !received.isEmpty else { return }
        let lines = received
        received.removeAll(keepingCapacity: true)
        lines.withUnsafeBytes { onRead?(.data($0)) }
    }

    private func scheduleDelivery() {
        guard !deliveryScheduled else { return }
        deliveryScheduled = true
        let box = UncheckedBox(self)
        loop.execute {
            box.value.deliveryScheduled = false
            box.value.pump()
        }
    }

    // MARK: Writing

    /// Sends each complete line in `bytes` (with what was written before it) as a text message.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        loop.assertOnLoopThread()
        guard let context, !base.isClosed, !shutdownRequested else { return }
        var start = 0
        while let lf = bytes[start...].firstIndex(of: 0x0A) {
            if partialLine.isEmpty {
                // A whole line (the usual case): queued from `bytes`, no copy of ours.
                let end = lf > start && bytes[lf - 1] == 0x0D ? lf - 1 : lf
                Self.queue(context, UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            } else {
                partialLine.append(contentsOf: bytes[start..<lf])
                if partialLine.last == 0x0D { partialLine.removeLast() }
                partialLine.withUnsafeBytes { Self.queue(context, $0) }
                partialLine = []  // not kept: an idle member holds no buffer
            }
            start = lf + 1
        }
        if start < bytes.count { partialLine.append(contentsOf: bytes[start...]) }
        flush()
    }

    /// Queues `line` as one text message (wslay copies it).
    private static func queue(_ context: OpaquePointer, _ line: UnsafeRawBufferPointer) {
        var message = wslay_event_msg(opcode: UInt8(WSLAY_TEXT_FRAME.rawValue),
                                      msg: line.baseAddress?.assumingMemoryBound(to: UInt8.self), msg_length: line.count)
        _ = wslay_event_queue_msg(context, &message)
    }

    /// Sends each complete line in `bytes`.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    /// Sends each complete line in `parts`, in order.
    public func write(_ parts: [[UInt8]]) { for part in parts { write(part) } }

    /// Sends each complete line in the bytes `parts` point at, in order.
    public func write(gathering parts: UnsafeBufferPointer<UnsafeRawBufferPointer>) { for part in parts { write(part) } }

    /// Has wslay send what it queued, and writes it to the stream in one write.
    private func flush() {
        guard let context, !base.isClosed else { return }
        inSend = true
        _ = wslay_event_send(context)
        inSend = false
        guard !sending.isEmpty else { return }
        if !base.isClosed { sending.withUnsafeBytes { base.write($0) } }
        sending = []  // not kept: an idle member holds no buffer
    }

    /// A line not complete yet, plus what the stream queued.
    public var writeQueueSize: Int {
        if let tcp { return tcp.isClosed ? 0 : partialLine.count + tcp.writeQueueSize }
        return base.isClosed ? 0 : partialLine.count + base.writeQueueSize
    }

    /// A line not complete yet, plus what the stream's queued output holds.
    public var queuedOutputMemory: Int { base.isClosed ? 0 : partialLine.count + base.queuedOutputMemory }

    /// See ``TCPConnection/setNotSentLowWatermark(_:)``.
    public func setNotSentLowWatermark(_ bytes: Int) { base.setNotSentLowWatermark(bytes) }

    // MARK: Socket

    /// See ``TCPConnection/setKeepAlive(seconds:)``.
    public func setKeepAlive(seconds: Int) { base.setKeepAlive(seconds: seconds) }
    /// See ``TCPConnection/setNoDelay(_:)``.
    public func setNoDelay(_ on: Bool) { base.setNoDelay(on) }
    /// The peer's address.
    public var peerDescription: String { base.peerDescription }
    /// See ``TCPConnection/peerIsLoopback``.
    public var peerIsLoopback: Bool { base.peerIsLoopback }
    /// Whether the stream under it is encrypted (`wss://`).
    public var isEncrypted: Bool { base.isEncrypted }
    /// Bytes read from the stream (frames and the handshake after its head).
    public var bytesRead: UInt64 { base.bytesRead }
    /// Bytes written to the stream (frames).
    public var bytesWritten: UInt64 { base.bytesWritten }

    // MARK: Closing

    /// Closes now, without a close frame.
    public func close() {
        loop.assertOnLoopThread()
        onRead = nil
        onWritesDrained = nil
        userReading = false
        base.close()
    }

    /// Sends what was written and a close frame (1000), then closes the stream once sent.
    public func shutdownAndClose() {
        loop.assertOnLoopThread()
        guard !base.isClosed, !shutdownRequested else { return }
        shutdownRequested = true
        onRead = nil
        userReading = false
        if let context, wslay_event_get_close_sent(context) == 0 {
            _ = wslay_event_queue_close(context, UInt16(WSLAY_CODE_NORMAL_CLOSURE.rawValue), nil, 0)
            flush()
        }
        endBase()
    }
}
