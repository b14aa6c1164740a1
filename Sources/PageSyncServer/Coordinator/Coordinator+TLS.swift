import Logging
import PageSyncCore
import UV

extension Coordinator {
    /// Sets up TLS as configured, or fails: never serves plaintext where TLS was asked for.
    /// Uses the context made before the state was loaded (``Daemon``), else makes it here.
    func startTLS(socketActivated: Bool) throws(StartError) {
        guard let tls = config.tls else {
            if !tlsSide.listenFDs.isEmpty {
                throw StartError("systemd passed a \(TLSConfig.socketName) socket but no TLS certificate and key are configured (tls.cert, tls.key)")
            }
            return
        }
        if tlsSide.context == nil { tlsSide.context = try Self.startingTLSContext(tls) }
        if let expiry = tlsSide.context?.expiry {
            // Served all the same: there is no other, and the plaintext port is not held up for it.
            logger.warning("TLS: certificate \(tls.certificateFile) has expired (\(expiry)); clients that verify it refuse to connect until it is renewed (then SIGHUP)")
        }
        let address = tls.listen.map(String.init(describing:)) ?? TLSConfig.socketName
        do {
            if socketActivated {
                for fd in tlsSide.listenFDs {
                    let listener = try TCPListener(loop: loop, adopting: fd)
                    try listener.listen { tcp in self.acceptTLS(tcp) }
                    tlsSide.listeners.append(listener)
                }
            } else if let listen = tls.listen {
                let listener = try TCPListener(loop: loop, host: listen.host, port: Int(listen.port))
                try listener.listen { tcp in self.acceptTLS(tcp) }
                tlsSide.listeners.append(listener)
            }
        } catch {
            throw StartError("cannot listen for TLS on \(address): \(error)")
        }
        if tlsSide.listeners.isEmpty && config.webTLSListen == nil {
            throw StartError(socketActivated
                ? "TLS is configured but systemd passed no socket named \(TLSConfig.socketName) (FileDescriptorName=)"
                : "TLS is configured but has no address: set tls.listen or --tls-listen")
        }
    }

    /// ``makeTLSContext(_:)`` at start: a failure is the daemon's one line, `TLS: <why>`.
    nonisolated static func startingTLSContext(_ tls: TLSConfig) throws(StartError) -> TLSContext {
        do {
            return try makeTLSContext(tls)
        } catch {
            throw StartError("TLS: \(error)")
        }
    }

    /// A server context for `tls` (reads the files: call at start or off the loop).
    nonisolated static func makeTLSContext(_ tls: TLSConfig) throws(TLSError) -> TLSContext {
        try TLSContext.server(
            certificateFile: tls.certificateFile, keyFile: tls.keyFile, clientCAFile: tls.clientCAFile,
            minimumVersion: TLSProtocolVersion(rawValue: tls.minimumVersion) ?? .v1_2,
            ciphers: tls.ciphers, cipherSuites: tls.cipherSuites)
    }

    func acceptTLS(_ tcp: TCPConnection) {
        guard let context = tlsSide.context, !shuttingDown else {
            tcp.close()
            return
        }
        let id = nextSessionID
        let connection: TLSConnection
        do throws(TLSError) {
            connection = try TLSConnection(tcp, loop: loop, context: context)
        } catch {
            logger.error("TLS session for \(tcp.peerDescription): \(error)")
            return
        }
        accept(connection)
        if sessions[id] != nil {
            trackHandshake(id)
        } else if connection.isHandshaking && !connection.isClosed {
            // Refused: its ERR 503 waits for the handshake, which must not take longer than
            // anyone's (otherwise each socket that never speaks TLS holds a descriptor for good).
            let refusedID = tlsSide.nextRefusedID
            tlsSide.nextRefusedID -= 1
            tlsSide.refused[refusedID] = connection
            trackHandshake(refusedID)
        }
    }

    // MARK: - Handshake timeout

    /// Watches a new TLS connection until its handshake completes; one that has not completed
    /// it within `tls.handshake-timeout` seconds is closed (a socket that connects and never
    /// speaks TLS would otherwise hold a slot until the idle timeout, which is off by default).
    private func trackHandshake(_ id: Int) {
        guard let seconds = config.tls?.handshakeTimeoutSeconds, !shuttingDown else { return }
        tlsSide.handshakes.timeoutMilliseconds = UInt64(seconds) * 1000
        tlsSide.handshakes.active(id, now: MonotonicClock.milliseconds())
        tlsSide.heapTrimPolicy.handshakeBegan()
        guard tlsSide.handshakeTimer == nil else { return }
        let period = min(1000, max(100, UInt64(seconds) * 250))
        let timer = UV.Timer(loop: loop)
        timer.start(afterMilliseconds: period, repeatMilliseconds: period) { self.closeStalledHandshakes() }
        tlsSide.handshakeTimer = timer
    }

    /// Closes every TLS connection still handshaking after the timeout; stops the sweep when
    /// no handshake is under way.
    private func closeStalledHandshakes() {
        guard let seconds = config.tls?.handshakeTimeoutSeconds, !shuttingDown else { return }
        tlsSide.handshakes.timeoutMilliseconds = UInt64(seconds) * 1000
        // Refused connections whose handshake ended (their ERR 503 sent, or failed) are done.
        tlsSide.refused = tlsSide.refused.filter { $0.value.isHandshaking && !$0.value.isClosed }
        // Read before the sweep: its closure may not touch tlsSide while the sweep changes it.
        let refusedNow = tlsSide.refused
        let due = tlsSide.handshakes.expire(now: MonotonicClock.milliseconds()) { id in
            guard let connection = id < 0 ? refusedNow[id] : sessions[id]?.connection as? TLSConnection else { return false }
            return connection.isHandshaking && !connection.isClosed
        }
        for id in due {
            if let refused = tlsSide.refused.removeValue(forKey: id) {
                logger.debug("closing \(refused.peerDescription): refused, and no TLS handshake within \(seconds) s")
                refused.close()
                continue
            }
            guard let session = sessions[id] else { continue }
            metrics.closedHandshakeTimeout &+= 1
            logger.info("closing \(session.connection.peerDescription): no TLS handshake within \(seconds) s")
            disconnect(session, reason: "no TLS handshake within \(seconds) s")
        }
        if tlsSide.handshakes.count == 0 {
            tlsSide.handshakeTimer?.close()
            tlsSide.handshakeTimer = nil
            // The burst is over: give back the pages its handshake buffers left as holes.
            if tlsSide.heapTrimPolicy.shouldTrim(now: MonotonicClock.milliseconds()) {
                let started = ThreadCPUTime.now()
                let released = HeapTrim.releaseFreeMemory()
                logger.debug("heap trimmed after TLS handshakes (\(released ? "memory returned" : "nothing to return"), \(ThreadCPUTime.now() - started))")
            }
        }
    }

}

extension Coordinator {
    /// SIGHUP for TLS: new connections (the web listener's over TLS too: it reads
    /// ``TLSSide/context`` at each accept) get the new certificate, existing ones keep theirs; a
    /// certificate that does not load leaves the old one in place. Returns the TLS settings now
    /// in force.
    func reloadTLS(_ fresh: TLSConfig?, context: Result<TLSContext, TLSError>?) -> TLSConfig? {
        guard let current = config.tls, !tlsSide.listeners.isEmpty || webTLSServer != nil else {
            if fresh != nil { logger.warning("reload: turning TLS on needs a restart") }
            return config.tls
        }
        guard var fresh, let context else {
            logger.warning("reload: TLS cannot be turned off by a reload; still serving TLS with the previous certificate")
            return current
        }
        if fresh.listen != current.listen && tlsSide.listenFDs.isEmpty {
            logger.warning("reload: TLS listen address changes need a restart; still on \(current.listen.map(String.init(describing:)) ?? "-")")
        }
        fresh.listen = current.listen
        switch context {
        case .success(let context):
            if let expiry = context.expiry {
                logger.error("reload: TLS: certificate \(fresh.certificateFile) has expired (\(expiry)); keeping the previous certificate")
                return current
            }
            tlsSide.context = context
            logger.info("reload: TLS certificate \(fresh.certificateFile) loaded; new connections use it")
            return fresh
        case .failure(let error):
            logger.error("reload: TLS: \(error); keeping the previous certificate")
            return current
        }
    }
}

