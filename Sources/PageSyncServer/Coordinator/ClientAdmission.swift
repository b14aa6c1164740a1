import PageSyncCore

/// Who may connect, and how long a connection may stay silent: `max-clients` (fitted to the
/// open-file limit), `max-clients-per-address` and `idle-timeout`. Loop thread only.
struct ClientAdmission {
    /// `max-clients`, or fewer when the open-file limit cannot hold them (``OpenFileBudget``).
    var clientLimit = 0
    /// `max-clients-per-address`.
    var addresses = AddressLimiter(limit: 1000)
    /// When each connection last sent a complete line (`idle-timeout`; swept by the
    /// coordinator's `idleTimer`).
    var idle = IdleTracker(timeoutMilliseconds: 1)
}
