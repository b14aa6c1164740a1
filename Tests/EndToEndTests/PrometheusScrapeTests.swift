import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real Prometheus (Debian's package) scrapes pagesyncd and reads back the page turns made
/// through `nc`.
@Suite("Prometheus scrapes pagesyncd", .timeLimit(.minutes(2)))
struct PrometheusScrapeTests {
    /// A `prometheus` on a free loopback port, scraping `target` every 250 ms into a fresh
    /// database in the workspace. (Prometheus 2.42 applies its targets on a 5 s tick, so its
    /// first scrape comes about 5 s after it starts, whatever the interval.)
    final class Prometheus: @unchecked Sendable {
        let port: UInt16
        private let process: ChildProcess
        let log: URL

        init(_ binary: String, scraping target: UInt16, in workspace: Workspace) async throws {
            port = try freeLoopbackPort()
            let config = try workspace.write("prometheus.yml", """
                global:
                  scrape_interval: 250ms
                  scrape_timeout: 250ms
                scrape_configs:
                  - job_name: pagesync
                    static_configs:
                      - targets: ["127.0.0.1:\(target)"]
                """)
            log = workspace.url("prometheus.log")
            let fd = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            defer { Glibc.close(fd) }
            process = try ChildProcess(executable: binary, arguments: [
                "--config.file=\(config.path)", "--storage.tsdb.path=\(workspace.url("tsdb").path)",
                "--web.listen-address=127.0.0.1:\(port)",
            ], outputFD: fd)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if let ended = process.termination {
                    throw HarnessError("prometheus exited (\(ended)):\n\(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(2000))")
                }
                if let ready = try? await HTTPTestClient.get(port: port, "/-/ready"), ready.status == 200 { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw HarnessError("prometheus not ready within 60 s")
        }

        /// The value of the instant query `query`'s first sample, or nil when it has none yet.
        func query(_ query: String) async throws -> String? {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
            let response = try await HTTPTestClient.get(port: port, "/api/v1/query?query=\(encoded)")
            guard response.status == 200,
                  let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
                  let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
                  let value = result.first?["value"] as? [Any], value.count == 2
            else { return nil }
            return value[1] as? String
        }

        deinit { process.killAndReap() }
    }

    @Test func aThousandPageTurnsThroughNcAreReadBackFromPrometheus() async throws {
        guard let binary = MetricsListenerTests.tool("prometheus") else {
            cannotRunHere(skipped: "prometheus is not installed; the scrape test did not run", underCI: "prometheus is not installed (scripts/test installs it)")
            return
        }
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 4)], arguments: MetricsListenerTests.arguments + ["--wrap"]) { daemon, workspace in
            let prometheus = try await Prometheus(binary, scraping: try await metricsPort(daemon), in: workspace)
            // 1,000 NEXT from nc, in one go; the room wraps, so every one turns the page.
            let turns = try workspace.write("turns.txt", String(repeating: "next\n", count: 1000))
            let nc = try await runProcess("/bin/sh", ["-c", "nc -q1 127.0.0.1 \(daemon.port) < \(shellQuoted(turns.path))"])
            #expect(nc.status == 0)
            #expect(nc.output.split(separator: "\n").filter { $0.hasPrefix("OK page=") }.count == 1000, "every turn answered OK")
            var value: String?
            let deadline = ContinuousClock.now + .seconds(60)
            while value != "1000" && ContinuousClock.now < deadline {
                value = try await prometheus.query("pagesync_page_changes_total")
                if value != "1000" { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(value == "1000", "pagesync_page_changes_total from Prometheus's query API; its log:\n\(((try? String(contentsOf: prometheus.log, encoding: .utf8)) ?? "").suffix(1500))")
            #expect(try await prometheus.query("pagesync_commands_total{command=\"next\"}") == "1000")
            #expect(try await prometheus.query("up{job=\"pagesync\"}") == "1")
        }
    }
}
