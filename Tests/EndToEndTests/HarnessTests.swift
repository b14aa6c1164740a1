import Foundation
import Testing

/// Checks of the harness itself, so a broken harness is not mistaken for a broken daemon.
@Suite("Harness", .timeLimit(.minutes(1)))
struct HarnessTests {
    @Test("the daemon starts with no blocked or ignored signals (else the signal tests would be meaningless)")
    func daemonSignalMaskIsClean() async throws {
        try await withDaemon(["a.txt": "one\n"]) { daemon, _ in
            let status = try readProcFile("/proc/\(daemon.pid)/status")
            let fields = Dictionary(uniqueKeysWithValues: status.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) : nil
            })
            #expect(fields["SigBlk"].flatMap { UInt64($0, radix: 16) } == 0, "blocked: \(fields["SigBlk"] ?? "?")")
        }
    }
}
