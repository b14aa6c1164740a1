import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--metrics-listen`: `/metrics` in Prometheus's text format (checked by Debian's promtool),
/// `/healthz`, and what bad HTTP input gets.
@Suite("Metrics listener", .timeLimit(.minutes(2)))
struct MetricsListenerTests {
    static let arguments = ["--metrics-listen", "127.0.0.1:0"]

    /// `promtool` from PATH or /usr/bin (scripts/test installs Debian's prometheus package).
    static func tool(_ name: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        return dirs.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    @Test func promtoolAcceptsTheMetrics() async throws {
        guard let promtool = Self.tool("promtool") else {
            cannotRunHere(skipped: "promtool is not installed; /metrics not checked", underCI: "promtool is not installed (scripts/test installs prometheus)")
            return
        }
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: Self.arguments + ["--wrap"]) { daemon, workspace in
            let port = try await metricsPort(daemon)
            let (client, _) = try await daemon.join()
            for _ in 0..<3 { _ = try await client.ok("NEXT") }
            _ = try await client.command("NOPE")
            let response = try await HTTPTestClient.get(port: port, "/metrics")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let samples = prometheusSamples(response.text)
            #expect(samples["pagesync_page_changes_total"] == "3")
            #expect(samples["pagesync_commands_total{command=\"next\"}"] == "3")
            #expect(samples["pagesync_errors_total{code=\"400\"}"] == "1")
            #expect(samples["pagesync_clients{transport=\"tcp\"}"] == "1.0")
            #expect(samples["pagesync_room_members{room=\"deck\"}"] == "1.0")
            #expect(samples["pagesync_journal_size_bytes"].flatMap(Double.init) ?? 0 > 0)
            #expect(samples["pagesync_command_duration_seconds_count"] == "4")
            try workspace.write("metrics.txt", bytes: response.body)
            let check = try await runProcess("/bin/sh", ["-c", "\(shellQuoted(promtool)) check metrics < \(shellQuoted(workspace.url("metrics.txt").path))"])
            #expect(check.status == 0 && check.output.isEmpty, "promtool check metrics: exit \(check.status)\n\(check.output)")
        }
    }

    @Test func healthzAndTheOtherPaths() async throws {
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: Self.arguments) { daemon, _ in
            let port = try await metricsPort(daemon)
            let health = try await HTTPTestClient.get(port: port, "/healthz")
            #expect(health.status == 200 && health.text == "ok\n")
            #expect(try await HTTPTestClient.get(port: port, "/nothing").status == 404)
            let post = try await HTTPTestClient.exchange(port: port, Array("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi".utf8))
            #expect(post.responses.first?.status == 405)
            #expect(post.responses.first?.headers["allow"] == "GET, HEAD")
            #expect(post.closed, "a request with a body is answered, then the connection closed")
        }
    }

    @Test func healthzSays503WhileRedisIsUnreachable() async throws {
        try await withWorkspace { workspace in
            try workspace.write("deck.txt", Documents.formFeed(pages: 3))
            // Nothing listens there: the daemon starts offline and refuses changes.
            let redis = try await RedisServer(in: workspace, startNow: false)
            let daemon = try await workspace.startDaemon(documents: ["deck.txt"], arguments: Self.arguments + ["--redis", redis.url])
            let port = try await metricsPort(daemon)
            let health = try await HTTPTestClient.get(port: port, "/healthz")
            #expect(health.status == 503)
            #expect(health.text == "changes refused: state engine unavailable (redis unreachable)\n")
            // A change is refused, and its ERR 503 (filled in when the engine answers) counted.
            let (client, _) = try await daemon.join()
            #expect(try await client.command("NEXT").header.code == 503)
            let samples = prometheusSamples(try await HTTPTestClient.get(port: port, "/metrics").text)
            #expect(samples["pagesync_errors_total{code=\"503\"}"] == "1")
            #expect(samples["pagesync_redis_up"] == "0.0")
            #expect(samples["pagesync_engine_accepting_changes"] == "0.0")
            try await redis.start()
            var healthy = false
            for _ in 0..<200 where !healthy {
                healthy = try await HTTPTestClient.get(port: port, "/healthz").status == 200
                if !healthy { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(healthy, "healthy again once Redis is up")
        }
    }

    @Test func aMetricsAddressInUseStopsTheStart() async throws {
        try await withWorkspace { workspace in
            let (holder, taken) = try boundLoopbackSocket(listening: true)
            defer { Glibc.close(holder) }
            let binary = try Binaries.pagesyncd()
            let result = try await runProcess(binary, ["--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
                                                       "--metrics-listen", "127.0.0.1:\(taken)"])
            #expect(result.status == 1)
            #expect(result.output.contains("cannot listen for metrics on 127.0.0.1:\(taken): "), "\(result.output)")
        }
    }
}
