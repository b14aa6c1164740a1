import PageSyncCore
import UV

/// What the coordinator counts through its own types.
extension ServerMetrics {
    /// Counts `item` if it is an `ERR` line (``countIfError(_:)-([UInt8])``).
    @inline(__always)
    mutating func countIfError(_ item: OutboxItem) {
        switch item {
        case .bytes(let line), .state(let line, _): countIfError(line)
        case .change, .event, .deferred, .text, .pending: break
        }
    }

    /// A client's connection closed: what it counted itself (bytes, conflated events, failed
    /// changes, its TLS handshake) moves into the totals of closed connections.
    mutating func connectionClosed(_ connection: any StreamConnection, outbox: Outbox) {
        closedBytesIn &+= connection.bytesRead
        closedBytesOut &+= connection.bytesWritten
        closedConflated &+= outbox.conflated
        closedFailedChanges &+= outbox.failedChanges
        if let tls = connection as? TLSConnection {
            if tls.completedHandshake { tlsHandshakes &+= 1 } else { tlsHandshakeFailures &+= 1 }
        }
    }
}
