import Foundation
import Testing

/// The event loop does the daemon's work: it must run at the priority the process was given.
@Suite("Priority", .timeLimit(.minutes(1)))
struct PriorityTests {
    /// Each thread of the daemon: its name (`comm`) and nice value.
    private static func threads(of pid: Int32) throws -> [(tid: String, name: String, nice: Int?)] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").sorted().map { tid in
            let name = try readProcFile("/proc/\(pid)/task/\(tid)/comm").trimmingCharacters(in: .whitespacesAndNewlines)
            // /proc/<pid>/task/<tid>/stat: "tid (comm) state ..."; nice is field 19.
            let stat = try readProcFile("/proc/\(pid)/task/\(tid)/stat")
            let fields = stat[stat.lastIndex(of: ")")!...].split(separator: " ")
            return (tid, name, fields.count > 17 ? Int(fields[17]) : nil)
        }
    }

    @Test("under nice -n 7 the event loop thread (pagesyncd-loop) and libuv's pool threads (pagesyncd-pool) run at nice 7, not at the nice of the thread that started them")
    func loopThreadRunsAtTheProcessNice() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 2))
            let daemon = try await workspace.startDaemon(documents: ["talk.txt"], niceness: 7)
            let (client, _) = try await daemon.join(label: "client")  // the loop is up and serving
            // A change, then the journal's sync on a pool thread (batch: within a second).
            try await client.ok("NEXT")
            try await Task.sleep(for: .milliseconds(1_500))
            let threads = try Self.threads(of: daemon.pid)
            let loop = threads.filter { $0.name == "pagesyncd-loop" }
            let pool = threads.filter { $0.name == "pagesyncd-pool" }
            #expect(loop.count == 1, "one thread named pagesyncd-loop: \(threads)")
            #expect(loop.first?.nice == 7, "the loop thread's nice value: \(threads)")
            // libuv's pool: four threads, started before the loop thread took its name.
            #expect(pool.count == 4 && pool.allSatisfy { $0.nice == 7 }, "libuv's pool threads: \(threads)")
        }
    }
}
