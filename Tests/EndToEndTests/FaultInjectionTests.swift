import Foundation
import Testing

/// The journal under injected faults (issue: a compaction that failed after its rename lost
/// acknowledged changes): each fault of ``FaultTorture/faults`` injected in turn into a daemon
/// with eight writers, SIGKILL at the injected point, and every room checked after a clean
/// start. A short run here; `scripts/torture N` runs N cycles per mode and reports the
/// figures (BENCHMARKS.md).
@Suite("Journal under injected faults", .timeLimit(.minutes(60)))
struct FaultInjectionTests {
    @Test("every injected fault, then SIGKILL: no acknowledged change lost, no version reused under one epoch",
          arguments: ["batch", "always"])
    func faultsThenKill(durability: String) async throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["PAGESYNC_TORTURE_CYCLES"].flatMap { Int($0) } ?? FaultTorture.faults.count
        let seed = environment["PAGESYNC_TORTURE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        try await withWorkspace { workspace in
            var torture = FaultTorture(workspace: workspace, durability: durability, seed: seed)
            let report = try await torture.run(cycles: cycles)
            print("fault torture (seed \(seed)): \(report)")
            if let path = environment["PAGESYNC_TORTURE_REPORT"] {
                let line = "\(report)\n"
                if let handle = FileHandle(forWritingAtPath: path) {
                    handle.seekToEndOfFile()
                    handle.write(Data(line.utf8))
                    try handle.close()
                } else {
                    try line.write(toFile: path, atomically: false, encoding: .utf8)
                }
            }
            #expect(report.violations.isEmpty, "seed \(seed): \(report.violations.prefix(10).joined(separator: "\n"))")
            #expect(report.faultsInjected >= cycles / 2, "the faults were reached: \(report)")
            #expect(report.acknowledged >= 100 * cycles, "changes were made in every cycle: \(report)")
        }
    }
}
