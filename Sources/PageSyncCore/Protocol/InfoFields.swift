/// The `field:value` lines of each `INFO` section (PROTOCOL.md, "INFO"), from a
/// ``ServerReport``: Redis's `INFO` layout, which operators' tools already read. Values are
/// one word where they can be; durations are seconds with microseconds (`0.000123`).
public enum InfoFields {
    /// The lines of `section`, its heading first.
    public static func lines(of section: InfoSection, _ r: ServerReport) -> [String] {
        var out = [section.heading]
        func field(_ name: String, _ value: some CustomStringConvertible) { out.append("\(name):\(value)") }
        switch section {
        case .server:
            field("version", r.version)
            field("protocol", Wire.protocolName)
            field("process_id", r.processID)
            field("uptime_seconds", Int(r.uptimeSeconds))
            field("start_time_seconds", Int(r.startTimeSeconds))
            field("resident_memory_bytes", r.residentBytes.map(String.init) ?? "-")
            field("cpu_seconds", InfoFields.seconds(UInt64(max(0, r.cpuSeconds) * 1e9)))
            field("listen", r.listen ?? "-")
            field("tls_listen", r.tlsListen ?? "-")
            field("metrics_listen", r.metricsListen ?? "-")
        case .clients:
            field("connected_clients", r.clients)
            field("connected_clients_tcp", r.clientsTCP)
            field("connected_clients_tls", r.clientsTLS)
            field("tls_handshaking", r.tlsHandshaking)
            field("max_clients", r.maxClients)
            field("backed_up_clients", r.clientsBackedUp)
            field("connections_tcp", r.metrics.connectionsTCP)
            field("connections_tls", r.metrics.connectionsTLS)
            field("refused_full", r.metrics.refusedFull)
            field("refused_per_address", r.metrics.refusedPerAddress)
            field("closed_idle", r.metrics.closedIdle)
            field("closed_handshake_timeout", r.metrics.closedHandshakeTimeout)
        case .rooms:
            field("rooms", r.roomCount)
            field("rooms_listed", r.rooms.count)
            for room in r.rooms {
                let s = room.state
                field("room_\(room.name)", "page=\(s.page.number),pages=\(s.pageCount),version=\(s.version),epoch=\(s.epoch),members=\(room.members),changes=\(room.changes)")
            }
        case .engine:
            field("engine", r.engine.kind.rawValue)
            field("durability", r.engine.durability?.rawValue ?? "-")
            field("accepting_changes", r.refusal == nil ? "yes" : "no")
            if let refusal = r.refusal { field("refusal", refusal) }
            field("groups", r.metrics.groups)
            field("groups_failed", r.groupsFailed)
            field("groups_pending", r.groupsPending)
            switch r.engine.kind {
            case .journal:
                field("journal_bytes", r.engine.journalBytes)
                field("syncs", r.engine.syncs)
                field("sync_failures", r.engine.syncFailures)
                field("last_sync_seconds", r.engine.lastSyncNanoseconds.map(seconds) ?? "-")
                field("compactions", r.engine.compactions)
            case .redis:
                field("redis_up", r.engine.redisUp ? "yes" : "no")
                field("redis_reconnects", r.engine.redisReconnects)
            }
        case .stats:
            let m = r.metrics
            field("commands", CommandVerb.allCases.reduce(0) { $0 + m.commands($1) })
            for verb in CommandVerb.allCases { field("command_\(verb.name)", m.commands(verb)) }
            field("errors", ErrorCode.allCases.reduce(0) { $0 + m.errors($1) })
            for code in ErrorCode.allCases { field("error_\(code.rawValue)", m.errors(code)) }
            field("page_changes", m.pageChanges)
            field("deliveries", r.deliveries)
            field("conflated_events", r.conflated)
            field("web_rate_waits", r.webRateWaits)
            field("bytes_in", r.bytesIn)
            field("bytes_out", r.bytesOut)
            field("auth_failures", m.authFailures)
            field("tls_handshakes", m.tlsHandshakes)
            field("tls_handshake_failures", m.tlsHandshakeFailures)
        }
        return out
    }

    /// Every section of `sections` (all of them for nil), with an empty line between two.
    public static func lines(of sections: InfoSection?, _ report: ServerReport) -> [String] {
        var out: [String] = []
        for section in sections.map({ [$0] }) ?? InfoSection.allCases {
            if !out.isEmpty { out.append("") }
            out += lines(of: section, report)
        }
        return out
    }

    /// `nanoseconds` as seconds with six decimals: `0.000123`.
    public static func seconds(_ nanoseconds: UInt64) -> String {
        let micros = (nanoseconds + 500) / 1000
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
