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
    @Test("durable rounds: the durable table's medians and ratios are taken over the rounds given, each ratio within its round")
    func durableRounds() async throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        // One run file (no durable rows) and three rounds: pagesyncd/redis is 0.8, 1.0 and 1.2 in
        // the rounds, so its median is 1.00 although the median changes/s are 110 and 100
        // (1.10). The run file's rows are not part of the durable table.
        let run = workspace.url("run-1.tsv")
        try Self.rows([("pagesyncd", "fanout_p99_us", 100, 1000), ("redis", "fanout_p99_us", 100, 2000),
                       ("pagesyncd", "durable_cps", 20, 5)]).write(to: run, atomically: true, encoding: .utf8)
        var rounds: [String] = []
        for (i, (ours, theirs)) in [(80.0, 100.0), (110.0, 110.0), (120.0, 100.0)].enumerated() {
            let url = workspace.url("durable-1-20-\(i + 1).tsv")
            try Self.rows([("pagesyncd", "durable_cps", 20, ours), ("redis", "durable_cps", 20, theirs),
                           ("pagesyncd-always", "durable_cps", 20, ours / 2), ("redis-always", "durable_cps", 20, theirs / 4)])
                .write(to: url, atomically: true, encoding: .utf8)
            rounds.append(url.path)
        }
        // Rounds of another client count are files of their own: they do not add to the 3 above.
        for i in 0..<2 {
            let url = workspace.url("durable-1-1-\(i + 1).tsv")
            try Self.rows([("pagesyncd", "durable_cps", 1, 30), ("redis", "durable_cps", 1, 10)]).write(to: url, atomically: true, encoding: .utf8)
            rounds.append(url.path)
        }
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report", run.path, "--durable-rounds"] + rounds)
        #expect(result.status == 0, "\(result.output)")
        // Columns: pagesyncd, pagesyncd-always, redis, redis-always (only in the rounds), then
        // pagesyncd/redis and pagesyncd-always/redis-always.
        let cps = try #require(Self.cells(of: "durable changes/s, 20 clients", in: result.output), "\(result.output)")
        #expect(cps == ["110", "55", "100", "25", "1.00", "2.00"])
        #expect(Self.cells(of: "durable changes/s, 1 client", in: result.output) == ["30", "–", "10", "–", "3.00", "–"])
        #expect(result.output.contains("Medians over 3 round(s) per row; each ratio is computed within one round"))
        // Without rounds the durable table comes from the runs, as before.
        let plain = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report", run.path])
        #expect(Self.cells(of: "durable changes/s, 20 clients", in: plain.output)?.first == "5", "\(plain.output)")
        #expect(plain.output.contains("Medians over 1 run(s) per row; each ratio is computed within one run"))
    }

    @Test("interleaved rows get a table of their own: pooled p50/p90/p99 and first follower per target, ratios to redis and the floor")
    func interleavedTable() async throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        // `interleave` at N=1000 in two runs: pagesyncd's changes took 1…100 µs in run 1 and
        // 101…200 in run 2, pagesyncd-always three times that, the floor twice, redis four times;
        // until the first follower, a tenth of pagesyncd's, three tenths, a fifth and a twentieth.
        // The same runs' one-target-at-a-time phase (`run`) measured other figures (pagesyncd
        // 1,000 µs every change), which must stay in their own tables.
        // (label, times pagesyncd's latency, twentieths of pagesyncd's latency until the first follower)
        let scale: [(String, Double, Double)] = [("pagesyncd", 1, 2), ("pagesyncd-always", 3, 6), ("floor", 2, 4), ("redis", 4, 1)]
        var files: [String] = []
        for run in 0..<2 {
            var lines: [(String, String, Int, Double)] = []
            for change in 1...100 {
                let us = Double(run * 100 + change)
                for (label, last, first) in scale {
                    lines.append((label, "interleaved_fanout_sample_us", 1000, last * us))
                    lines.append((label, "interleaved_fanout_first_sample_us", 1000, first * us / 20))
                }
                lines.append(("pagesyncd", "fanout_sample_us", 1000, 1000))
                lines.append(("redis", "fanout_sample_us", 1000, 2000))
                lines.append(("floor", "fanout_sample_us", 1000, 500))
            }
            for (label, last, _) in scale {
                lines.append((label, "interleaved_fanout_p99_us", 1000, last * Double(run * 100 + 99)))
            }
            lines.append(("pagesyncd", "fanout_p99_us", 1000, 1000))
            lines.append(("redis", "fanout_p99_us", 1000, 2000))
            lines.append(("floor", "fanout_p99_us", 1000, 500))
            if run == 1 { lines.append(("nats", "interleaved_open_errors", 1000, 3)) }
            let url = workspace.url("run-\(run + 1).tsv")
            try Self.rows(lines).write(to: url, atomically: true, encoding: .utf8)
            files.append(url.path)
        }
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report"] + files)
        #expect(result.status == 0, "\(result.output)")
        let output = result.output
        let table = try #require(output.range(of: "#### Fan-out, interleaved change by change").map { String(output[$0.lowerBound...]) }, "\(output)")
        // Columns: pagesyncd, pagesyncd-always, redis, floor (the --columns order), then
        // pagesyncd/redis, pagesyncd/floor, pagesyncd-always/redis, pagesyncd-always/floor.
        #expect(table.contains("| metric | pagesyncd | pagesyncd-always | redis | floor | pagesyncd/redis | pagesyncd/floor | pagesyncd-always/redis | pagesyncd-always/floor |"), "\(table)")
        // Pooled over both runs: the 198th, 180th and 100th of 200.
        let p99 = try #require(Self.cells(of: "fan-out p99 (µs), N=1000, interleaved", in: table), "\(table)")
        #expect(p99 == ["198", "594", "792", "396", "0.25", "0.50", "0.75", "1.50"])
        let p90 = try #require(Self.cells(of: "fan-out p90 (µs), N=1000, interleaved", in: table))
        #expect(p90 == ["180", "540", "720", "360", "0.25", "0.50", "0.75", "1.50"])
        let p50 = try #require(Self.cells(of: "fan-out p50 (µs), N=1000, interleaved", in: table))
        #expect(p50 == ["100", "300", "400", "200", "0.25", "0.50", "0.75", "1.50"])
        let firstP50 = try #require(Self.cells(of: "first follower reached p50 (µs), N=1000, interleaved", in: table), "\(table)")
        #expect(firstP50 == ["10", "30", "5", "20", "2.00", "0.50", "6.00", "1.50"])
        let firstP99 = try #require(Self.cells(of: "first follower reached p99 (µs), N=1000, interleaved", in: table))
        #expect(firstP99 == ["19.8", "59.4", "9.9", "39.6", "2.00", "0.50", "6.00", "1.50"])
        let count = try #require(Self.cells(of: "changes measured, N=1000, interleaved", in: table))
        #expect(count == ["200", "200", "200", "200"])
        #expect(table.contains("- nats: 3 error(s) opening followers, N=1000 (run 2)"), "\(table)")
        // The one-target-at-a-time tables still hold only `run`'s figures.
        let pooled = try #require(Self.cells(of: "fan-out p99 (µs), N=1000, pooled", in: output), "\(output)")
        #expect(pooled == ["1,000", "2,000", "500", "0.50", "2.00"])
        let perRun = try #require(Self.cells(of: "fan-out p99 (µs), N=1000", in: output))
        #expect(perRun == ["1,000", "2,000", "500", "0.50", "2.00"])
        #expect(!output.contains("interleaved_"), "\(output)")
        #expect(Self.cells(of: "fan-out p99 (µs), N=1000, pooled", in: table) == nil)
    }

    /// The cells after the goal column of the goals table's row for `goal`.
    static func goalCells(_ goal: String, in output: String) -> [String]? {
        for line in output.split(separator: "\n") where line.contains("| \(goal) |") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return Array(cells.dropFirst(2))
        }
        return nil
    }

    @Test("--goals: a table first, each goal's figure read from the rows and its status from its bound")
    func goalsTable() async throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        // Interleaved at N=1000: pagesyncd 1…100 µs, redis twice that, the floor 0.8 times; the
        // same targets one after another: pagesyncd 1…100, redis 1.25 times. So pagesyncd's p99
        // is 0.50 of redis's interleaved (met) and 1.25 of the floor's (not met, above 1.1).
        var lines: [(String, String, Int, Double)] = [("pagesyncd", "recovery_ms", 1_000_000, 280), ("pagesyncd", "recovery_max_ms", 1_000_000, 290)]
        for change in 1...100 {
            let us = Double(change)
            lines += [("pagesyncd", "interleaved_fanout_sample_us", 1000, us), ("redis", "interleaved_fanout_sample_us", 1000, 2 * us),
                      ("floor", "interleaved_fanout_sample_us", 1000, 0.8 * us),
                      ("pagesyncd", "fanout_sample_us", 1000, us), ("redis", "fanout_sample_us", 1000, 1.25 * us)]
        }
        let run = workspace.url("run-1.tsv")
        try Self.rows(lines).write(to: run, atomically: true, encoding: .utf8)
        // Durable rounds at 20 clients: pagesyncd/redis 0.80, 0.95 and 1.00 (median 0.95, met);
        // pagesyncd-always/redis-always at 1 client 0.5, 0.6, 0.7 (median 0.60, below 0.9).
        var rounds: [String] = []
        for (i, (batch, always)) in [(0.8, 0.5), (0.95, 0.6), (1.0, 0.7)].enumerated() {
            let url = workspace.url("durable-1-\(i).tsv")
            try Self.rows([("pagesyncd", "durable_cps", 20, batch * 1000), ("redis", "durable_cps", 20, 1000),
                           ("pagesyncd-always", "durable_cps", 1, always * 100), ("redis-always", "durable_cps", 1, 100)])
                .write(to: url, atomically: true, encoding: .utf8)
            rounds.append(url.path)
        }
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report", "--goals", run.path, "--durable-rounds"] + rounds)
        #expect(result.status == 0, "\(result.output)")
        let output = result.output
        #expect(output.hasPrefix("#### Goals"), "the goals come first: \(output.prefix(200))")
        #expect(Self.goalCells("`batch` ≥ 0.9× redis without persistence, 20 clients", in: output) == ["0.95 (rounds 0.80 to 1.00)", "**met**"], "\(output)")
        #expect(Self.goalCells("`always` ≥ 0.9× redis appendfsync always, 1 client", in: output) == ["0.60 (rounds 0.50 to 0.70)", "**not met**"])
        #expect(Self.goalCells("fan-out p99 ≤ 1.0× redis pub/sub, N=1000", in: output) == ["0.50 interleaved (99 vs 198 µs); 0.80 pooled", "**met**"])
        #expect(Self.goalCells("fan-out p99 ≤ 1.1× floor, N=1000", in: output) == ["1.25 interleaved (99 vs 79.2 µs)", "**not met**"])
        #expect(Self.goalCells("recovery of 1,000,000 journal records < 1,000 ms", in: output) == ["280 ms (slowest start 290 ms)", "**met**"])
        // What the run did not measure says so, with no status.
        #expect(Self.goalCells("fan-out p99 ≤ 1.0× redis pub/sub, N=10000", in: output) == ["not measured in this run", "–"])
        #expect(Self.goalCells("RSS per idle TLS client ≤ 8,192 bytes", in: output) == ["not measured in this run", "–"])
        // Issue 11's rows only when three daemons shared rooms through Redis in the run.
        #expect(!output.contains("cross-daemon"))
        // The rest of the report follows.
        #expect(output.contains("#### Every figure") && output.contains("#### Durable throughput"))
    }

    @Test("--goals: issue 41's rows read pagesync-bench monitoring's figures")
    func monitoringGoals() async throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        // Two runs; each goal reads the median over them (of two values: their mean).
        for (i, (info, loop, storm)) in [(800.0, 4000.0, 900.0), (1400.0, 12000.0, 1300.0)].enumerated() {
            try Self.rows([
                ("pagesyncd", "info_p99_us", 20, info), ("pagesyncd", "ping_p99_us", 20, 300),
                ("pagesyncd", "scrape_loop_p99_us", 10000, loop), ("pagesyncd", "scrape_loop_p50_us", 10000, 250),
                ("pagesyncd", "change_p99_us", 10000, 900), ("pagesyncd", "change_scraping_p99_us", 10000, 2900),
                ("pagesyncd", "storm_ping_p99_us", 1000, storm), ("pagesyncd", "storm_ping_alone_p99_us", 1000, 100),
                ("pagesyncd", "storm_lost", 1000, 0),
            ]).write(to: workspace.url("run-\(i).tsv"), atomically: true, encoding: .utf8)
        }
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"),
                                          ["report", "--goals", workspace.url("run-0.tsv").path, workspace.url("run-1.tsv").path])
        let output = result.output
        #expect(Self.goalCells("`INFO` p99 < 1 ms while 20 clients change rooms", in: output) == ["1,100 µs (PING p99 beside it 300 µs)", "**not met**"], "\(output)")
        #expect(Self.goalCells("a scrape with 10,000 clients in 100 rooms < 10 ms of loop time (p99)", in: output) == ["8,000 µs (p50 250 µs)", "**met**"])
        #expect(Self.goalCells("scrapes back to back delay a page turn by < 10 ms (p99), 10,000 clients", in: output)
            == ["2,900 µs while scraping, 900 µs alone", "**met**"])
        #expect(Self.goalCells("PING p99 during 1,000 simultaneous scrapes ≤ 1 ms above PING alone, every scrape answered or closed", in: output)
            == ["1,100 µs during, 100 µs alone; 0 scrapes neither answered nor closed", "**met**"])
    }

    @Test("BENCHMARKS.md's results are scripts/bench's report: between its markers, the goals table lists the goals the report prints, in order")
    func benchmarksFileHasTheReportsGoals() async throws {
        let markdown = try String(contentsOf: DocumentationTests.root.appendingPathComponent("BENCHMARKS.md"), encoding: .utf8)
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let begin = try #require(lines.firstIndex(of: "<!-- scripts/bench results: begin -->"), "no begin marker")
        let end = try #require(lines.firstIndex(of: "<!-- scripts/bench results: end -->"), "no end marker")
        #expect(begin < end && lines.filter { $0.hasPrefix("<!-- scripts/bench results:") }.count == 2)
        // 400: the report holds a column per target (pagesyncd-ws joined them) and a row per goal.
        #expect(lines.count <= 400, "BENCHMARKS.md is for readers: \(lines.count) lines")
        func goals(_ text: [String]) -> [String] {
            text.filter { $0.hasPrefix("| 1") }.compactMap { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.dropFirst().first }
        }
        let written = goals(Array(lines[begin...end]))
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        let empty = workspace.url("run-1.tsv")
        try "".write(to: empty, atomically: true, encoding: .utf8)
        let result = try await runProcess(try Binaries.path(of: "pagesync-bench"), ["report", "--goals", empty.path])
        let reported = goals(result.output.split(separator: "\n").map(String.init))
        #expect(reported.count >= 18 && written == reported, "BENCHMARKS.md: \(written)\nthe report: \(reported)")
    }
}
