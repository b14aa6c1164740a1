/// A plaintext stream's write side, reachable without dynamic dispatch: the fan-out's fast
/// path writes one shared line to thousands of connections, and each hop from a session to
/// its socket is a cache miss there.
///
/// It holds the stream unretained: valid only while the connection it came from
/// (``TCPConnection/directWriter``) is referenced. Loop thread only.
public struct StreamWriter {
    unowned(unsafe) let io: StreamIO

    init(_ io: StreamIO) { self.io = io }

    /// Writes `bytes` when nothing is queued on the stream, exactly as the connection's
    /// `write` would (what the kernel does not take now is copied and queued); returns true.
    /// Returns false and does nothing when output is already queued in libuv (the peer is
    /// behind) or the stream is closed, shutting down or failed.
    public func writeIfIdle(_ bytes: UnsafeRawBufferPointer) -> Bool {
        io.writeIfIdle(bytes)
    }
}
