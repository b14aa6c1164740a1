import Logging
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

extension Coordinator {
    // MARK: - AUTH

    /// `AUTH <token>`: checked only when the ``AuthLimiter`` admits it, compared with
    /// ``TokenVerifier``, and logged through ``AuthFailureLog`` (about a line a minute per
    /// address, however many attempts).
    func authenticate(_ token: String, from session: Session, in runtime: RoomRuntime) {
        guard let expected = runtime.config.token else {
            session.control = true
            stage(session, .bytes(Wire.authorized()))
            return
        }
        let address = PeerAddress.host(ofPeer: session.connection.peerDescription)
        let now = MonotonicClock.milliseconds()
        let room = runtime.room.name
        switch authLimiter.admit(address: address, connection: session.id, now: now) {
        case .refuse(let retry, let close):
            metrics.authFailures &+= 1
            logAuth(authLog.record(address: address, room: room, refused: true, now: now))
            stage(session, .bytes(Wire.error(ProtocolError(code: .tooManyAttempts, message: "too many attempts, retry in \(retry) s"))))
            if close { closeAfterAuthFailures(session) }
        case .check:
            if tokenVerifier.matches(token, expected: expected) {
                authLimiter.succeeded(address: address, connection: session.id)
                session.control = true
                stage(session, .bytes(Wire.authorized()))
                return
            }
            metrics.authFailures &+= 1
            let failure = authLimiter.failed(address: address, connection: session.id, now: now)
            logAuth(authLog.record(address: address, room: room, refused: false, now: now))
            let wait = failure.retryAfterSeconds > 0 ? "; retry in \(failure.retryAfterSeconds) s" : ""
            stage(session, .bytes(Wire.error(ProtocolError(code: .forbidden, message: "wrong token" + wait))))
            if failure.closeConnection { closeAfterAuthFailures(session) }
        }
    }

    func closeAfterAuthFailures(_ session: Session) {
        stage(session, .bytes(Wire.bye("too many failed AUTH attempts")))
        closeAfterFlush(session)
    }

    /// Logs a line now, and makes sure the summaries are flushed once a second while any
    /// window is open.
    func logAuth(_ line: String?) {
        if let line { logger.notice("\(line)") }
        guard authLogTimer == nil, !shuttingDown else { return }
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: 1000, repeatMilliseconds: 1000) { self.flushAuthLog() }
        authLogTimer = timer
    }

    func flushAuthLog() {
        let now = MonotonicClock.milliseconds()
        for line in authLog.flush(now: now) { logger.notice("\(line)") }
        guard authLog.isEmpty else { return }
        authLimiter.prune(now: now)
        authLogTimer?.close()
        authLogTimer = nil
    }
}
