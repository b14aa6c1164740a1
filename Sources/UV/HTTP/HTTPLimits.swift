/// The limits of an ``HTTPServer`` and each of its connections. The defaults suit a metrics
/// or health endpoint scraped by a monitoring system over loopback.
public struct HTTPLimits: Equatable, Sendable {
    /// The most bytes of one request head (request line and header fields, with their line
    /// ends); a longer head is answered `431` and the connection closed. Default 8 KiB.
    public var maxHeadBytes: Int
    /// How long one request head may take to arrive, counted from the connection's start for
    /// its first request and from its first byte for later ones: a slower head (a slowloris
    /// client) gets `408` and the connection is closed. Default 5 s.
    public var headTimeoutMilliseconds: UInt64
    /// How long a kept-alive connection may wait for its next request's first byte before it
    /// is closed. Default 30 s.
    public var idleTimeoutMilliseconds: UInt64
    /// After a response that closes the connection, how long its input is still read and thrown
    /// away (so that a client still sending, a body or a huge head, reads the response instead
    /// of a reset), and how many bytes at most. Default 2 s and 4 MiB.
    public var lingerMilliseconds: UInt64
    /// See ``lingerMilliseconds``.
    public var maxLingerBytes: Int
    /// How long a response may take to leave (its bytes handed to the kernel) before the
    /// connection is closed: a client that sends requests and reads no answer. Default 10 s.
    public var sendTimeoutMilliseconds: UInt64
    /// Connections open at once; the next one gets `503` and is closed. Default 64.
    public var maxConnections: Int
    /// How long a connection that begins with a handshake (an HTTPS server's TLS) may take to
    /// complete it, from its start: past it the connection is closed, whatever the head
    /// timeout. Default 10 s.
    public var handshakeTimeoutMilliseconds: UInt64

    /// The limits; every argument defaults to the value documented on its property.
    public init(maxHeadBytes: Int = 8192, headTimeoutMilliseconds: UInt64 = 5000, idleTimeoutMilliseconds: UInt64 = 30_000,
                lingerMilliseconds: UInt64 = 2000, maxLingerBytes: Int = 4 << 20, sendTimeoutMilliseconds: UInt64 = 10_000,
                maxConnections: Int = 64, handshakeTimeoutMilliseconds: UInt64 = 10_000) {
        self.maxHeadBytes = maxHeadBytes
        self.headTimeoutMilliseconds = headTimeoutMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.lingerMilliseconds = lingerMilliseconds
        self.maxLingerBytes = maxLingerBytes
        self.sendTimeoutMilliseconds = sendTimeoutMilliseconds
        self.maxConnections = maxConnections
        self.handshakeTimeoutMilliseconds = handshakeTimeoutMilliseconds
    }
}
