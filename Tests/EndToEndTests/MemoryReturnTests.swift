import Foundation
import Testing

/// What the daemon gives back to the system once clients that made it grow have left.
@Suite("Memory given back after clients leave", .timeLimit(.minutes(2)))
struct MemoryReturnTests {
    /// One page of about 900 KB, under the 1 MiB `max-text`: each `TEXT` reply is that big.
    static let bigPage: KeyValuePairs<String, String> = [
        "big.txt": String(repeating: "a line of a long page, to be pulled and never read\n", count: 18_000)
    ]

    @Test("after 60 clients that each left a 900 KB TEXT reply queued leave, the daemon's RSS comes back near its start")
    func rssComesBackAfterPullersLeave() async throws {
        guard Daemon.resourceBudgetsApply else { return }  // sanitizers keep freed memory on purpose
        try await withDaemon(Self.bigPage) { daemon, _ in
            let (probe, _) = try await daemon.join(label: "probe")
            #expect(try await probe.ok("STATUS").int("clients") == 1)
            let start = try daemon.rssKiB()
            var pullers: [LineClient] = []
            for i in 0..<60 {
                let (puller, _) = try await daemon.join(label: "puller-\(i)", receiveBufferSize: 4096)
                try await puller.sendRaw(Array("TEXT\nTEXT\nTEXT\n".utf8))
                pullers.append(puller)
            }
            // The replies the pullers never read are queued in the daemon (one each: past the
            // output high-water mark it reads no further commands): it grows by about 50 MB.
            // (Each wait below is at most a minute of 20 ms polls.)
            let grew = try await eventually(attempts: 3000) { try daemon.rssKiB() - start > 32 * 1024 }
            let peak = try daemon.rssKiB()
            #expect(grew, "RSS \(peak) KiB, from \(start) KiB: the test did not make the daemon grow")
            for puller in pullers { puller.close() }
            #expect(try await eventually(attempts: 3000) { try await probe.ok("STATUS").int("clients") == 1 })
            // malloc keeps what they freed unless it is trimmed (before: about +35 MiB for good
            // after 50 pullers). The status timer's trim comes within seconds; allow a minute.
            let back = try await eventually(attempts: 3000) { try daemon.rssKiB() - start < 12 * 1024 }
            let end = try daemon.rssKiB()
            #expect(back, "RSS \(end) KiB after the pullers left, from \(start) KiB at the start and \(peak) KiB with them")
        }
    }
}
