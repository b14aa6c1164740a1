#if canImport(Glibc)
import Glibc
#endif
import PageSyncCore
import UV

/// `INFO`, and the `--metrics-listen` HTTP listener (`/metrics`, `/healthz`): both report one
/// ``ServerReport``, read from the coordinator's state and counters when asked.
extension Coordinator {
    /// Everything `INFO` and `/metrics` report, as it stands now.
    func report() -> ServerReport {
        var r = ServerReport()
        r.processID = Int(getpid())
        r.uptimeSeconds = Double(MonotonicClock.nanoseconds() - monitoring.startedNanoseconds) / 1e9
        r.startTimeSeconds = monitoring.startedWallSeconds
        r.residentBytes = ProcessMemory.residentBytes()
        r.cpuSeconds = Monitoring.cpuSeconds()
        r.listen = Monitoring.address(listeners.first?.localAddress)
        r.tlsListen = Monitoring.address(tlsSide.listeners.first?.localAddress)
        r.metricsListen = Monitoring.address(monitoring.server?.localAddress)
        r.maxClients = admission.clientLimit
        r.metrics = metrics
        r.bytesIn = metrics.closedBytesIn
        r.bytesOut = metrics.closedBytesOut
        r.conflated = metrics.closedConflated
        var failedChanges = metrics.closedFailedChanges
        for session in sessions.values {
            let connection = session.connection
            if connection.isEncrypted { r.clientsTLS += 1 } else { r.clientsTCP += 1 }
            if session.backedUp { r.clientsBackedUp += 1 }
            r.bytesIn &+= connection.bytesRead
            r.bytesOut &+= connection.bytesWritten
            r.conflated &+= session.outbox.conflated
            failedChanges &+= session.outbox.failedChanges
            // The cast only for TLS connections: a dynamic cast per client was the costliest part
            // of a report with 10,000 clients.
            if connection.isEncrypted, let tls = connection as? TLSConnection {
                if tls.completedHandshake { r.metrics.tlsHandshakes &+= 1 } else { r.tlsHandshaking += 1 }
            }
        }
        // A change whose group failed was answered ERR 507 and undone: it is no page change.
        r.metrics.count(error: .notSaved, times: failedChanges)
        r.metrics.pageChanges &-= min(failedChanges, r.metrics.pageChanges)
        r.tlsHandshaking += tlsSide.refused.count
        r.roomCount = roomOrder.count
        r.rooms = roomOrder.prefix(config.metricsRooms).compactMap { name in
            rooms[name].map { ServerReport.Room(name: name, state: $0.room.state, members: $0.members.count, changes: $0.changes) }
        }
        r.deliveries = delivery.counts.deliveries
        r.groupsFailed = delivery.counts.groupsFailed
        r.webRateWaits = delivery.counts.webRateWaits
        r.groupsPending = delivery.pendingCount
        r.refusal = refusal
        r.engine = engine.statistics
        if let stats = monitoring.server?.statistics {
            r.listener.requests = UInt64(stats.requests)
            r.listener.badRequests = UInt64(stats.badRequests)
            r.listener.refused = UInt64(stats.refused)
            r.listener.timeouts = UInt64(stats.timeouts)
        }
        r.lastRenderNanoseconds = monitoring.lastRenderNanoseconds
        r.stopping = shuttingDown
        return r
    }

    /// A navigation moved `runtime`'s room: one page change, for the daemon and for the room.
    @inline(__always)
    func countPageChange(_ runtime: RoomRuntime) {
        metrics.pageChanges &+= 1
        runtime.changes &+= 1
    }

    /// Why changes are refused now (the journal failing, Redis unreachable), or nil.
    var refusal: String? {
        if let why = engine.refusal { return why }
        if let authority, !authority.isAvailable { return "state engine unavailable (redis unreachable)" }
        return nil
    }

    /// The reply to `INFO [<section>]`.
    func info(_ section: InfoSection?) -> [UInt8] {
        Wire.info(report(), section: section)
    }

    /// Starts the metrics listener when `metrics-listen` is set.
    func startMonitoring() throws(StartError) {
        guard let address = config.metricsListen else { return }
        do {
            let listener = try TCPListener(loop: loop, host: address.host, port: Int(address.port))
            let server = HTTPServer(loop: loop, listener: listener) { head in self.answer(head) }
            try server.start()
            monitoring.server = server
        } catch {
            throw StartError("cannot listen for metrics on \(address): \(error)")
        }
        let bound = Monitoring.address(monitoring.server?.localAddress) ?? "\(address)"
        logger.info("metrics on http://\(bound)\(MonitoringRoutes.metricsPath), health on http://\(bound)\(MonitoringRoutes.healthPath)")
        if !address.isLoopback {
            logger.notice("metrics-listen \(address) is not a loopback address: /metrics has no authentication, and anyone who can reach it reads it")
        }
    }

    /// Stops the metrics listener (shutdown).
    func stopMonitoring() {
        monitoring.server?.close()
        monitoring.server = nil
    }

    /// The metrics listener's answer to one request.
    private func answer(_ head: HTTPRequestHead) -> HTTPReply {
        switch MonitoringRoutes.route(head) {
        case .respond(let response):
            return .respond(response)
        case .health:
            let (status, text) = HealthCheck.status(stopping: shuttingDown, refusal: refusal)
            return .respond(.text(status, text, headers: [HTTPHeader("Cache-Control", "no-store")]))
        case .metrics:
            let now = MonotonicClock.milliseconds()
            let body: [UInt8]
            if let last = monitoring.lastBody, last.at == now {
                body = last.body
            } else {
                let started = MonotonicClock.nanoseconds()
                body = monitoring.exposition.render(report())
                monitoring.lastBody = (body, now)
                monitoring.lastRenderNanoseconds = MonotonicClock.nanoseconds() - started
            }
            return .respond(HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", MetricsExposition.contentType)], body: body))
        }
    }
}
