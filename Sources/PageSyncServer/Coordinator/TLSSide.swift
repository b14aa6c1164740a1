import PageSyncCore
import UV

/// What the coordinator keeps for TLS: its listeners and certificate, and the handshakes
/// under way (`tls.handshake-timeout`). Loop thread only.
struct TLSSide {
    /// Sockets systemd passed for TLS (`FileDescriptorName=` pagesync-tls).
    let listenFDs: [Int32]
    var listeners: [TCPListener] = []
    /// The certificate new TLS connections get; SIGHUP replaces it.
    var context: TLSContext?
    /// TLS connections whose handshake is still under way: sessions under their ids, refused
    /// connections under negative ones.
    var handshakes = IdleTracker(timeoutMilliseconds: 1)
    /// Sweeps ``handshakes`` while any is under way.
    var handshakeTimer: UV.Timer?
    /// When the end of a burst of TLS handshakes is worth a heap trim.
    var heapTrimPolicy = HeapTrimPolicy()
    /// TLS connections refused (`ERR 503`) before their handshake completed: the refusal waits
    /// for it, so ``handshakes`` bounds them too, under negative ids (sessions' are positive).
    var refused: [Int: TLSConnection] = [:]
    /// The id the next refused connection gets.
    var nextRefusedID = -1

    init(listenFDs: [Int32], context: TLSContext?) {
        self.listenFDs = listenFDs
        self.context = context
    }
}
