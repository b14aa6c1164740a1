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
            sendAudience(runtime, to: session)
            return
        }
        let address = PeerAddress.host(ofPeer: session.connection.peerDescription)
        let now = MonotonicClock.milliseconds()
        let room = runtime.room.name
        switch auth.limiter.admit(address: address, connection: session.id, now: now) {
        case .refuse(let retry, let close):
            metrics.authFailures &+= 1
            logAuth(auth.log.record(address: address, room: room, refused: true, now: now))
            stage(session, .bytes(Wire.error(ProtocolError(code: .tooManyAttempts, message: "too many attempts, retry in \(retry) s"))))
            if close { closeAfterAuthFailures(session) }
        case .check:
            if auth.verifier.matches(token, expected: expected) {
                auth.limiter.succeeded(address: address, connection: session.id)
                session.control = true
                stage(session, .bytes(Wire.authorized()))
                sendAudience(runtime, to: session)
                return
            }
            metrics.authFailures &+= 1
            let failure = auth.limiter.failed(address: address, connection: session.id, now: now)
            logAuth(auth.log.record(address: address, room: room, refused: false, now: now))
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
        guard auth.logTimer == nil, !shuttingDown else { return }
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: 1000, repeatMilliseconds: 1000) { self.flushAuthLog() }
        auth.logTimer = timer
    }

    func flushAuthLog() {
        let now = MonotonicClock.milliseconds()
        for line in auth.log.flush(now: now) { logger.notice("\(line)") }
        guard auth.log.isEmpty else { return }
        auth.limiter.prune(now: now)
        auth.logTimer?.close()
        auth.logTimer = nil
    }
}
