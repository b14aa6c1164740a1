import PageSyncCore
import PageSyncServer
import Testing
import UV

@Suite struct MonitoringRoutesTests {
    @Test func metricsAndHealthTakeGETAndHEAD() {
        #expect(MonitoringRoutes.route(HTTPRequestHead(method: "GET", target: "/metrics")) == .metrics)
        #expect(MonitoringRoutes.route(HTTPRequestHead(method: "HEAD", target: "/metrics?debug=1")) == .metrics)
        #expect(MonitoringRoutes.route(HTTPRequestHead(method: "GET", target: "/healthz")) == .health)
        guard case .respond(let index) = MonitoringRoutes.route(HTTPRequestHead(method: "GET", target: "/")) else {
            Issue.record("no index")
            return
        }
        #expect(index.status == 200)
        #expect(String(decoding: index.body, as: UTF8.self).contains("/metrics"))
    }

    @Test func otherMethodsGet405WithAllow() {
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "CONNECT"] {
            guard case .respond(let response) = MonitoringRoutes.route(HTTPRequestHead(method: method, target: "/metrics")) else {
                Issue.record("\(method) routed")
                continue
            }
            #expect(response.status == 405)
            #expect(response.headers.contains(HTTPHeader("Allow", "GET, HEAD")))
        }
    }

    @Test func otherPathsGet404WhateverTheMethod() {
        for (method, target) in [("GET", "/metrics/"), ("GET", "/Metrics"), ("POST", "/nothing"), ("GET", "/healthz/../metrics"), ("GET", "*")] {
            guard case .respond(let response) = MonitoringRoutes.route(HTTPRequestHead(method: method, target: target)) else {
                Issue.record("\(method) \(target) routed")
                continue
            }
            #expect(response.status == 404, "\(method) \(target)")
        }
        guard case .respond(let long) = MonitoringRoutes.route(HTTPRequestHead(method: "GET", target: "/" + String(repeating: "x", count: 5000))) else {
            Issue.record("routed")
            return
        }
        #expect(long.body.count < 400, "the answer does not echo a long path whole")
    }
}

@Suite struct HealthCheckTests {
    @Test func okUnlessStoppingOrRefusing() {
        #expect(HealthCheck.status(stopping: false, refusal: nil) == (200, "ok"))
        #expect(HealthCheck.status(stopping: false, refusal: "sync failed: Input/output error") == (503, "changes refused: sync failed: Input/output error"))
        #expect(HealthCheck.status(stopping: true, refusal: nil) == (503, "stopping"))
    }
}

@Suite struct MetricsExpositionTests {
    /// The body's samples: `name{labels}` -> value.
    static func samples(_ body: [UInt8]) -> [String: String] {
        var out: [String: String] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let space = line.lastIndex(of: " ")!
            out[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return out
    }

    static func report() -> ServerReport {
        var r = ServerReport()
        r.clientsTCP = 7
        r.clientsTLS = 2
        r.roomCount = 150
        let state = RoomState(page: PageNumber(3)!, pageCount: 6, version: 11, by: nil, doc: "d", epoch: Epoch(1))
        r.rooms = (0..<100).map { ServerReport.Room(name: "r\($0)", state: state, members: $0, changes: UInt64($0) * 2) }
        for _ in 0..<1000 { r.metrics.count(.next) }
        r.metrics.pageChanges = 1000
        r.metrics.count(error: .notSaved)
        r.metrics.commandDuration.observe(30_000)
        r.metrics.commandDuration.observe(2_000_000)
        r.metrics.groupSize.observe(3)
        r.engine = EngineStatistics(kind: .journal, durability: .always)
        r.engine.synced(took: 1_500_000, failed: false)
        r.bytesOut = 1 << 40
        return r
    }

    @Test func countersGaugesAndPerRoomSeries() {
        let samples = Self.samples(MetricsExposition().render(Self.report()))
        #expect(samples["pagesync_clients{transport=\"tcp\"}"] == "7.0")
        #expect(samples["pagesync_clients{transport=\"tls\"}"] == "2.0")
        #expect(samples["pagesync_commands_total{command=\"next\"}"] == "1000")
        #expect(samples["pagesync_commands_total{command=\"info\"}"] == "0")
        #expect(samples["pagesync_page_changes_total"] == "1000")
        #expect(samples["pagesync_errors_total{code=\"507\"}"] == "1")
        #expect(samples["pagesync_sent_bytes_total"] == "1099511627776")
        #expect(samples["pagesync_rooms"] == "150.0")
        #expect(samples["pagesync_room_members{room=\"r42\"}"] == "42.0")
        #expect(samples["pagesync_room_page_changes_total{room=\"r99\"}"] == "198")
        #expect(samples["pagesync_journal_syncs_total"] == "1")
        #expect(samples["pagesync_engine_accepting_changes"] == "1.0")
        #expect(samples.keys.filter { $0.hasPrefix("pagesync_room_members{") }.count == 100, "only the listed rooms")
        #expect(samples.keys.contains { $0.hasPrefix("pagesync_redis_") } == false, "a journal daemon has no Redis series")
    }

    @Test func histogramsAreCumulativeWithSumAndCount() {
        let samples = Self.samples(MetricsExposition().render(Self.report()))
        #expect(samples["pagesync_command_duration_seconds_bucket{le=\"2.5e-05\"}"] == "0")
        #expect(samples["pagesync_command_duration_seconds_bucket{le=\"5e-05\"}"] == "1")
        #expect(samples["pagesync_command_duration_seconds_bucket{le=\"0.0025\"}"] == "2")
        #expect(samples["pagesync_command_duration_seconds_bucket{le=\"+Inf\"}"] == "2")
        #expect(samples["pagesync_command_duration_seconds_count"] == "2")
        #expect(samples["pagesync_command_duration_seconds_sum"] == "0.00203")
        #expect(samples["pagesync_group_size_rooms_bucket{le=\"4\"}"] == "1")
        #expect(samples["pagesync_journal_sync_duration_seconds_bucket{le=\"0.001\"}"] == "0")
        #expect(samples["pagesync_journal_sync_duration_seconds_bucket{le=\"0.0025\"}"] == "1")
    }

    @Test func everyFamilyHasHelpAndTypeOnce() {
        let lines = String(decoding: MetricsExposition().render(Self.report()), as: UTF8.self).split(separator: "\n")
        let typed = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        let helped = lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        #expect(Set(typed).count == typed.count, "one TYPE line per family")
        #expect(Set(helped) == Set(typed), "every family has its HELP")
        for line in lines where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            let family = typed.first { name == $0 || name == $0 + "_bucket" || name == $0 + "_sum" || name == $0 + "_count" }
            #expect(family != nil, "\(line) belongs to no family")
        }
        for family in typed where lines.contains("# TYPE \(family) counter") {
            #expect(family.hasSuffix("_total"), "counter \(family)")
        }
    }

    @Test func aRedisDaemonReportsRedis() {
        var r = Self.report()
        r.engine = EngineStatistics(kind: .redis)
        r.engine.redisUp = true
        r.engine.redisReconnects = 2
        r.refusal = nil
        let samples = Self.samples(MetricsExposition().render(r))
        #expect(samples["pagesync_redis_up"] == "1.0")
        #expect(samples["pagesync_redis_reconnects_total"] == "2")
        #expect(samples.keys.contains { $0.hasPrefix("pagesync_journal_") } == false)
    }

    @Test func numbers() {
        #expect(HistogramText.number(0) == "0")
        #expect(HistogramText.number(10) == "10")
        #expect(HistogramText.number(0.000025) == "2.5e-05")
        #expect(HistogramText.number(0.5) == "0.5")
    }
}

@Suite struct MetricsExpositionRegistryTests {
    @Test func aRoomNoLongerListedLosesItsSeries() {
        let exposition = MetricsExposition()
        var r = MetricsExpositionTests.report()
        #expect(MetricsExpositionTests.samples(exposition.render(r))["pagesync_room_members{room=\"r7\"}"] == "7.0")
        r.rooms = Array(r.rooms.prefix(5))
        r.metrics.pageChanges = 1001
        let samples = MetricsExpositionTests.samples(exposition.render(r))
        #expect(samples["pagesync_room_members{room=\"r7\"}"] == nil)
        #expect(samples["pagesync_room_members{room=\"r4\"}"] == "4.0")
        #expect(samples["pagesync_page_changes_total"] == "1001", "a counter is set to the report's value, not added to")
        #expect(samples.keys.filter { $0.hasPrefix("pagesync_room_page_changes_total{") }.count == 5)
    }
}
