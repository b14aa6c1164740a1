import Foundation
import Testing

/// `pagesync-bench report`, the step that turns `scripts/bench`'s result files into the tables of
/// BENCHMARKS.md: fed known rows, it must print the figures they imply.
@Suite("pagesync-bench report", .timeLimit(.minutes(1)))
struct BenchReportTests {
    /// One result file: `label metric n value` rows.
    static func rows(_ rows: [(String, String, Int, Double)]) -> String {
        rows.map { "\($0.0)\t\($0.1)\t\($0.2)\t\($0.3)\n" }.joined()
    }

    /// The cells after the first of the table row whose first cell is `title`.
    static func cells(of title: String, in output: String) -> [String]? {
        for line in output.split(separator: "\n") where line.hasPrefix("| \(title) |") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return Array(cells.dropFirst())
        }
        return nil
    }

    @Test("every change of every run is pooled: p99 over all of them, ratios of the pooled figures")
    func pooledPercentiles() async throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        // Run 1 has pagesyncd's changes 1…100 µs, run 2 has 101…200; the floor took twice as long
        // and redis four times. Pooled, pagesyncd's p99 is the 198th of 200 (198 µs), while each
        // run alone has a p99 of 99 or 199.
        var files: [String] = []
        for run in 0..<2 {
            var lines: [(String, String, Int, Double)] = []
            for change in 1...100 {
                let us = Double(run * 100 + change)
                lines.append(("pagesyncd", "fanout_sample_us", 1000, us))
                lines.append(("floor", "fanout_sample_us", 1000, 2 * us))
                lines.append(("redis", "fanout_sample_us", 1000, 4 * us))
            }
            lines.append(("pagesyncd", "fanout_p99_us", 1000, Double(run * 100 + 99)))
            lines.append(("floor", "fanout_p99_us", 1000, Double(2 * (run * 100 + 99))))
            lines.append(("redis", "fanout_p99_us", 1000, Double(4 * (run * 100 + 99))))
            let url = workspace.url("run-\(run + 1).tsv")
            try Self.rows(lines).write(to: url, atomically: true, encoding: .utf8)
            files.append(url.path)
        }
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report"] + files)
        #expect(result.status == 0, "\(result.output)")
        // Columns: pagesyncd, redis, floor, then pagesyncd/redis and pagesyncd/floor.
        let p99 = try #require(Self.cells(of: "fan-out p99 (µs), N=1000, pooled", in: result.output), "\(result.output)")
        #expect(p99 == ["198", "792", "396", "0.25", "0.50"])
        let p50 = try #require(Self.cells(of: "fan-out p50 (µs), N=1000, pooled", in: result.output))
        #expect(p50 == ["100", "400", "200", "0.25", "0.50"])
        let count = try #require(Self.cells(of: "changes measured, N=1000", in: result.output))
        #expect(count == ["200", "200", "200"])
        // The per-run table still takes the median of each run's own p99 (99 and 199: 149).
        let perRun = try #require(Self.cells(of: "fan-out p99 (µs), N=1000", in: result.output))
        #expect(perRun.first == "149")
        // The samples are not a metric of their own in the per-run table.
        #expect(!result.output.contains("fanout_sample_us"))
    }
}
