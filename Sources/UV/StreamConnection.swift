/// A connected byte stream as the daemon and the pager use it: plaintext TCP
/// (``TCPConnection``) or TLS over TCP (``TLSConnection``). Every member has the contract
/// documented on ``TCPConnection``; loop thread only.
public protocol StreamConnection: AnyObject {
    /// Starts reading; see ``TCPConnection/startReading(_:)``.
    func startReading(_ onRead: @escaping (StreamReadEvent) -> Void)
    /// Stops reading (back-pressure); the callback is kept.
    func stopReading()
    /// True while reading is started.
    var isReading: Bool { get }
    /// True once closed.
    var isClosed: Bool { get }
    /// Writes `bytes` after everything written before; never blocks.
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Writes `bytes`.
    func write(_ bytes: [UInt8])
    /// Writes several buffers in order.
    func write(_ parts: [[UInt8]])
    /// Writes the bytes `parts` point at, in order (see ``withGatheredBytes(_:groupSize:bytes:_:)``).
    func write(gathering parts: UnsafeBufferPointer<UnsafeRawBufferPointer>)
    /// Bytes accepted by `write` and not yet handed to the kernel.
    var writeQueueSize: Int { get }
    /// Memory that output accepted by `write` and not yet handed to the kernel holds: its bytes
    /// (``writeQueueSize``) plus the bookkeeping of each write queued separately (about 256
    /// bytes each). What back-pressure counts: many small writes hold many times their bytes.
    var queuedOutputMemory: Int { get }
    /// Caps the bytes the kernel holds unsent (`TCP_NOTSENT_LOWAT`): past them, writes queue
    /// in ``writeQueueSize`` and ``onWritesDrained`` says when the peer caught up.
    func setNotSentLowWatermark(_ bytes: Int)
    /// Called when `writeQueueSize` dropped to 0 after having been above 0.
    var onWritesDrained: (() -> Void)? { get set }
    /// TCP keep-alive after `seconds` idle; 0 or less disables it.
    func setKeepAlive(seconds: Int)
    /// `TCP_NODELAY`.
    func setNoDelay(_ on: Bool)
    /// The peer as "127.0.0.1:5555" or "[::1]:5555".
    var peerDescription: String { get }
    /// True when the peer is on this machine's loopback (127.0.0.0/8, ::1, ::ffff:127.x).
    var peerIsLoopback: Bool { get }
    /// True when the bytes are encrypted on the wire (TLS).
    var isEncrypted: Bool { get }
    /// Bytes read from the network since the connection was made (for TLS, the encrypted
    /// bytes); still valid after close.
    var bytesRead: UInt64 { get }
    /// Bytes handed to the network since the connection was made, sent or queued (for TLS,
    /// the encrypted bytes); still valid after close.
    var bytesWritten: UInt64 { get }
    /// Closes now; pending writes are dropped.
    func close()
    /// Flushes what was written, then closes.
    func shutdownAndClose()
    /// Ends the output once what was written has left, and goes on reading (a half-close, as
    /// ``TCPConnection/shutdownWrites()``): TLS sends close_notify, then a FIN. Later writes
    /// are ignored. By default (a stream with no half-close of its own) ``shutdownAndClose()``.
    func shutdownWrites()
    /// True while a handshake that comes before the stream's bytes (TLS) is under way: such a
    /// connection has sent nothing yet and can be bounded by a handshake timeout. False by
    /// default.
    var isHandshaking: Bool { get }
    /// The write side without dynamic dispatch, for writing one line to many connections;
    /// nil when writes need more than the plain stream (TLS).
    var directWriter: StreamWriter? { get }
}

extension StreamConnection {
    /// None by default.
    public var directWriter: StreamWriter? { nil }
    /// No half-close: ``shutdownAndClose()``.
    public func shutdownWrites() { shutdownAndClose() }
    /// No handshake: false.
    public var isHandshaking: Bool { false }
}

extension TCPConnection: StreamConnection {
    /// Always false: plaintext TCP.
    public var isEncrypted: Bool { false }
    /// The stream itself: plaintext bytes go straight to the socket.
    public var directWriter: StreamWriter? { writer }
}
