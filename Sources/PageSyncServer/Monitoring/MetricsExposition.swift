import PageSyncCore
import Prometheus

/// `GET /metrics`: a ``ServerReport`` in the Prometheus text exposition format (0.0.4).
///
/// Counters and gauges are rendered by swift-prometheus, from one registry kept for the daemon's
/// life: each rendering sets its series to the report's values (the daemon counts in plain
/// integers on its loop and hands them over here, at scrape time); a series is made the first
/// time it is seen and unregistered once a rendering leaves it out (a room no longer listed).
/// Made per rendering, the registry cost about 2 ms for 100 rooms: it copies a family's
/// dictionary for each series added. Histograms are written here, in the same format:
/// swift-prometheus 2.4's histogram records one observation at a time under a lock and cannot
/// take bucket counts kept elsewhere, and the daemon's histograms are counted on its hot path
/// without either (``FixedHistogram``). Names follow Prometheus's conventions: `pagesync_` first,
/// the unit last (`_seconds`, `_bytes`), `_total` for counters. Loop thread only.
package final class MetricsExposition {
    /// The `Content-Type` of the body.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry = PrometheusCollectorRegistry()
    private var gauges: [String: Gauge] = [:]
    private var counters: [String: Counter] = [:]
    /// The series set by the rendering under way.
    private var touched = Set<String>()
    /// Each listed room's series, by room name.
    private var roomSeries: [String: RoomSeries] = [:]

    /// An empty registry.
    package init() {}

    /// The whole body for `r`.
    package func render(_ r: ServerReport) -> [UInt8] {
        touched.removeAll(keepingCapacity: true)
        gauge("build_info", "pagesync's version and wire protocol (always 1)", 1,
              labels: [("version", r.version), ("protocol", Wire.protocolName)])
        gauge("process_start_time_seconds", "When the daemon started, in seconds since 1970", r.startTimeSeconds, namespace: nil)
        counter("process_cpu_seconds_total", "CPU time used by the daemon (user and system), in seconds", r.cpuSeconds, namespace: nil)
        if let resident = r.residentBytes {
            gauge("process_resident_memory_bytes", "The daemon's resident memory, in bytes", Double(resident), namespace: nil)
        }
        clients(r)
        rooms(r)
        engine(r)
        stats(r)
        for (key, gauge) in gauges where !touched.contains(key) {
            registry.unregisterGauge(gauge)
            gauges[key] = nil
        }
        for (key, counter) in counters where !touched.contains(key) {
            registry.unregisterCounter(counter)
            counters[key] = nil
        }
        var out = registry.emitToBuffer()
        let m = r.metrics
        HistogramText.append("pagesync_command_duration_seconds", "Time to handle one command on the event loop, in seconds",
                             m.commandDuration, to: &out)
        HistogramText.append("pagesync_group_size_rooms", "Rooms changed per group handed to the state engine", m.groupSize, to: &out)
        HistogramText.append("pagesync_fanout_duration_seconds",
                             "From a group's settling to the last write of the fan-out that followed it, in seconds",
                             m.fanoutDuration, to: &out)
        if r.engine.kind == .journal {
            HistogramText.append("pagesync_journal_sync_duration_seconds", "Time of one journal fdatasync, asked and answered on the loop, in seconds",
                                 r.engine.syncDuration, to: &out)
        }
        return out
    }

    /// Sets the gauge `<namespace>_<name>{labels}` to `value`, making it the first time.
    private func gauge(_ name: String, _ help: String, _ value: Double, labels: [(String, String)] = [], namespace: String? = "pagesync") {
        let key = Self.key(name, labels)
        touched.insert(key)
        if let gauge = gauges[key] { return gauge.set(to: value) }
        let descriptor = MetricNameDescriptor(namespace: namespace, metricName: name, unitName: "", helpText: help)
        let gauge = labels.isEmpty ? registry.makeGauge(descriptor: descriptor) : registry.makeGauge(descriptor: descriptor, labels: labels)
        gauges[key] = gauge
        gauge.set(to: value)
    }

    /// Sets the counter `pagesync_<name>{labels}` to `value`, making it the first time.
    private func counter(_ name: String, _ help: String, _ value: UInt64, labels: [(String, String)] = []) {
        let counter = counter(name, help, labels, namespace: "pagesync")
        counter.reset()
        counter.increment(by: Int64(clamping: value))
    }

    /// ``counter(_:_:_:labels:)`` for a value with a fraction.
    private func counter(_ name: String, _ help: String, _ value: Double, namespace: String?) {
        let counter = counter(name, help, [], namespace: namespace)
        counter.reset()
        counter.increment(by: max(0, value))
    }

    private func counter(_ name: String, _ help: String, _ labels: [(String, String)], namespace: String?) -> Counter {
        let key = Self.key(name, labels)
        touched.insert(key)
        if let counter = counters[key] { return counter }
        let descriptor = MetricNameDescriptor(namespace: namespace, metricName: name, unitName: "", helpText: help)
        let counter = labels.isEmpty ? registry.makeCounter(descriptor: descriptor) : registry.makeCounter(descriptor: descriptor, labels: labels)
        counters[key] = counter
        return counter
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        labels.isEmpty ? name : name + labels.map { "\u{1}\($0.0)=\($0.1)" }.joined()
    }

    private func clients(_ r: ServerReport) {
        gauge("clients", "Clients connected now, by transport", Double(r.clientsTCP), labels: [("transport", "tcp")])
        gauge("clients", "Clients connected now, by transport", Double(r.clientsTLS), labels: [("transport", "tls")])
        gauge("clients_max", "Clients served at most (max-clients, or fewer under the open-file limit)", Double(r.maxClients))
        gauge("clients_backed_up", "Clients whose output waits in the daemon now: they read slower than their room changes, and get only its newest state",
                Double(r.clientsBackedUp))
        gauge("tls_handshaking", "TLS connections whose handshake is under way", Double(r.tlsHandshaking))
        let m = r.metrics
        counter("connections_total", "Connections admitted, by transport", m.connectionsTCP, labels: [("transport", "tcp")])
        counter("connections_total", "Connections admitted, by transport", m.connectionsTLS, labels: [("transport", "tls")])
        counter("connections_refused_total", "Connections refused with ERR 503, by reason", m.refusedFull, labels: [("reason", "full")])
        counter("connections_refused_total", "Connections refused with ERR 503, by reason", m.refusedPerAddress, labels: [("reason", "per_address")])
        counter("connections_closed_total", "Connections the daemon closed by a time limit, by reason", m.closedIdle, labels: [("reason", "idle")])
        counter("connections_closed_total", "Connections the daemon closed by a time limit, by reason", m.closedHandshakeTimeout,
                  labels: [("reason", "tls_handshake_timeout")])
    }

    private func rooms(_ r: ServerReport) {
        gauge("rooms", "Rooms served", Double(r.roomCount))
        var listed = Set<String>()
        for room in r.rooms {
            listed.insert(room.name)
            let series = roomSeries[room.name] ?? RoomSeries(registry, room: room.name)
            roomSeries[room.name] = series
            series.members.set(to: Double(room.members))
            series.page.set(to: Double(room.state.page.number))
            series.pages.set(to: Double(room.state.pageCount))
            series.version.set(to: Double(room.state.version))
            series.changes.reset()
            series.changes.increment(by: Int64(clamping: room.changes))
        }
        for (name, series) in roomSeries where !listed.contains(name) {
            series.unregister(from: registry)
            roomSeries[name] = nil
        }
    }

    /// The series of one room, made together the first time the room is listed (most of the
    /// series are rooms': one lookup per room, not per series).
    private struct RoomSeries {
        let members, page, pages, version: Gauge
        let changes: Counter

        init(_ registry: PrometheusCollectorRegistry, room: String) {
            let label = [("room", room)]
            func gauge(_ name: String, _ help: String) -> Gauge {
                registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "pagesync", metricName: name, unitName: "", helpText: help), labels: label)
            }
            members = gauge("room_members", "Members of the room connected to this daemon (first metrics-rooms rooms)")
            page = gauge("room_page", "The room's page (first metrics-rooms rooms)")
            pages = gauge("room_pages", "The room's page count (first metrics-rooms rooms)")
            version = gauge("room_version", "The room's version, which grows with each change within its epoch (first metrics-rooms rooms)")
            changes = registry.makeCounter(
                descriptor: MetricNameDescriptor(namespace: "pagesync", metricName: "room_page_changes_total", unitName: "",
                                                 helpText: "Page turns of the room made by this daemon's clients (first metrics-rooms rooms)"),
                labels: label)
        }

        func unregister(from registry: PrometheusCollectorRegistry) {
            for gauge in [members, page, pages, version] { registry.unregisterGauge(gauge) }
            registry.unregisterCounter(changes)
        }
    }

    private func engine(_ r: ServerReport) {
        let e = r.engine
        gauge("engine_accepting_changes", "1 while the state engine takes changes, 0 while they get ERR 503 or 507", r.refusal == nil ? 1 : 0)
        gauge("groups_pending", "Groups of changes handed to the state engine and not settled yet", Double(r.groupsPending))
        counter("groups_total", "Groups of changes handed to the state engine (one per loop turn with changes)", r.metrics.groups)
        counter("groups_failed_total", "Groups that could not be saved (their changes undone and answered with an error)", r.groupsFailed)
        switch e.kind {
        case .journal:
            gauge("journal_size_bytes", "Bytes of records in the journal file", Double(e.journalBytes))
            counter("journal_syncs_total", "Journal fdatasync calls completed, failed ones included", e.syncs)
            counter("journal_sync_failures_total", "Journal fdatasync calls that failed", e.syncFailures)
            counter("journal_compactions_total", "Journal compactions completed", e.compactions)
            if let last = e.lastSyncNanoseconds {
                gauge("journal_last_sync_duration_seconds", "Time of the last journal fdatasync, in seconds", Double(last) / 1e9)
            }
        case .redis:
            gauge("redis_up", "1 while both Redis connections are up", e.redisUp ? 1 : 0)
            counter("redis_reconnects_total", "Times the Redis connection came back after an outage", e.redisReconnects)
        }
    }

    private func stats(_ r: ServerReport) {
        let m = r.metrics
        for verb in CommandVerb.allCases {
            counter("commands_total", "Commands handled, by verb", m.commands(verb), labels: [("command", verb.name)])
        }
        for code in ErrorCode.allCases {
            counter("errors_total", "ERR replies sent, by code", m.errors(code), labels: [("code", String(code.rawValue))])
        }
        counter("page_changes_total", "Page turns made by this daemon's clients (navigations that moved a room)", m.pageChanges)
        counter("event_deliveries_total", "PAGE events addressed to room members (one per member and new state)", r.deliveries)
        counter("events_conflated_total", "PAGE events replaced by a newer one before a slow reader got them", r.conflated)
        counter("web_rate_waits_total", "Times a WebSocket member's commands waited because the web's members had spent their rate", r.webRateWaits)
        counter("received_bytes_total", "Bytes received from clients (encrypted bytes for TLS)", r.bytesIn)
        counter("sent_bytes_total", "Bytes sent to clients, or queued for them (encrypted bytes for TLS)", r.bytesOut)
        counter("auth_failures_total", "AUTH with a wrong token, or refused", m.authFailures)
        counter("tls_handshakes_total", "TLS handshakes, by result", m.tlsHandshakes, labels: [("result", "ok")])
        counter("tls_handshakes_total", "TLS handshakes, by result", m.tlsHandshakeFailures, labels: [("result", "failed")])
        let l = r.listener
        counter("http_requests_total", "Requests answered by the metrics listener", l.requests)
        counter("http_bad_requests_total", "Requests the metrics listener answered 400 or 431", l.badRequests)
        counter("http_connections_refused_total", "Connections the metrics listener refused (too many open)", l.refused)
        counter("http_timeouts_total", "Connections the metrics listener closed by a time limit", l.timeouts)
        if let last = r.lastRenderNanoseconds {
            gauge("metrics_render_duration_seconds", "Time the previous rendering of /metrics took on the event loop, in seconds", Double(last) / 1e9)
        }
    }
}

/// A ``FixedHistogram`` as a Prometheus histogram: `# HELP`, `# TYPE`, a `_bucket` line per
/// bound (cumulative, `le` ascending, `+Inf` last), `_sum` and `_count`.
package enum HistogramText {
    package static func append(_ name: String, _ help: String, _ histogram: FixedHistogram, to out: inout [UInt8]) {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (bound, count) in histogram.cumulative {
            text += "\(name)_bucket{le=\"\(bound.isInfinite ? "+Inf" : number(bound))\"} \(count)\n"
        }
        text += "\(name)_sum \(number(histogram.scaledSum))\n\(name)_count \(histogram.count)\n"
        out.append(contentsOf: text.utf8)
    }

    /// A number as Prometheus reads it: integers without a fraction, others in Swift's shortest
    /// form (`2.5e-05`, `0.001`).
    package static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
