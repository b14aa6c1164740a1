import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench interleave`, the fan-out latency phase that measures several targets in the
/// same rounds: against two daemons and the raw floor, every target gets every change and the
/// report puts them side by side.
@Suite("pagesync-bench interleave", .timeLimit(.minutes(1)))
struct BenchInterleaveTests {
    @Test("two daemons and the floor, 10 followers each, 10 rounds: 9 changes per target after warm-up, in the interleaved table")
    func interleavesThreeTargets() async throws {
        try await withWorkspace { workspace in
            try workspace.write("bench.txt", "page one of the bench document\n\u{0C}page two of the bench document\n")
            let batch = try await workspace.startDaemon(documents: ["bench.txt"])
            let alwaysState = workspace.url("state-always")
            try FileManager.default.createDirectory(at: alwaysState, withIntermediateDirectories: true)
            let always = try await workspace.startDaemon(documents: ["bench.txt"],
                                                         arguments: ["--durability", "always", "--state-dir", alwaysState.path])
            let bench = try Binaries.path(of: "pagesync-bench")
            let floor = try await FloorServer(bench: bench, in: workspace)
            defer { floor.process.killAndReap() }

            let results = workspace.url("interleaved.tsv").path
            let run = try await runPagerTestProcess(bench, [
                "interleave", "--target", "pagesyncd:\(batch.port)", "--target", "pagesyncd-always=pagesyncd:\(always.port)",
                "--target", "floor:\(floor.port)", "--followers", "10", "--changes", "10", "--workers", "1",
                "--settle-ms", "100", "--out", results,
            ], in: workspace, timeout: .seconds(40))
            #expect(run.status == 0, "\(run.output)")
            let rows = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            for label in ["pagesyncd", "pagesyncd-always", "floor"] {
                func values(_ metric: String) -> [Double] {
                    rows.filter { $0.count == 4 && $0[0] == label && $0[1] == metric && $0[2] == "10" }.compactMap { Double($0[3]) }
                }
                // 10 changes, the first dropped as warm-up; every one reached every follower.
                let last = values("interleaved_fanout_sample_us"), first = values("interleaved_fanout_first_sample_us")
                #expect(last.count == 9, "\(label): \(run.output)")
                #expect(first.count == 9, "\(label): \(run.output)")
                #expect(last.allSatisfy { $0 > 0 }, "\(label): \(last)")
                #expect(zip(first, last).allSatisfy { $0 <= $1 }, "\(label): first \(first), last \(last)")
                #expect(values("interleaved_fanout_p99_us").count == 1, "\(label)")
                #expect(values("interleaved_fanout_errors").isEmpty && values("interleaved_open_errors").isEmpty, "\(run.output)")
                // Nothing under run's own metric names: those are the one-target-at-a-time tables'.
                #expect(values("fanout_sample_us").isEmpty && values("fanout_p99_us").isEmpty)
            }
            #expect(batch.isRunning && always.isRunning)

            let report = try await runProcess(bench, ["report", results])
            #expect(report.status == 0, "\(report.output)")
            #expect(report.output.contains("| metric | pagesyncd | pagesyncd-always | floor | pagesyncd/floor | pagesyncd-always/floor |"), "\(report.output)")
            let count = try #require(BenchReportTests.cells(of: "changes measured, N=10, interleaved", in: report.output), "\(report.output)")
            #expect(count == ["9", "9", "9"])
        }
    }

    @Test("--target is [LABEL=]KIND:PORT; two targets with one label are refused")
    func targetSpecs() async throws {
        let bench = try Binaries.path(of: "pagesync-bench")
        let twice = try await runProcess(bench, ["interleave", "--target", "pagesyncd:1", "--target", "pagesyncd:2"])
        #expect(twice.status != 0)
        #expect(twice.output.contains("pagesyncd is given twice"), "\(twice.output)")
        let unknown = try await runProcess(bench, ["interleave", "--target", "x=memcached:1"])
        #expect(unknown.status != 0)
        #expect(unknown.output.contains("--target"), "\(unknown.output)")
    }
}

/// `pagesync-bench floor-server` on a free port, for one test.
private struct FloorServer {
    let process: ChildProcess
    let port: Int

    init(bench: String, in workspace: Workspace) async throws {
        let log = workspace.url("floor.log")
        let fd = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw HarnessError("open \(log.path) failed") }
        defer { Glibc.close(fd) }
        let process = try ChildProcess(executable: bench, arguments: ["floor-server", "--port", "0"], outputFD: fd)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let match = text.firstMatch(of: /listening on 127\.0\.0\.1:(\d+)/), let port = Int(match.1) {
                self.process = process
                self.port = port
                return
            }
            if let ended = process.termination { throw HarnessError("floor-server exited (\(ended)): \(text)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.killAndReap()
        throw HarnessError("floor-server did not listen within 20 s")
    }
}
