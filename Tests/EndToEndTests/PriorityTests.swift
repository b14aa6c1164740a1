import Foundation
import Testing

/// The event loop does the daemon's work: it must run at the priority the process was given.
@Suite("Priority", .timeLimit(.minutes(1)))
struct PriorityTests {
    @Test("under nice -n 7 the event loop thread (named pagesyncd-loop) runs at nice 7, not at the nice of the thread that started it")
    func loopThreadRunsAtTheProcessNice() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 2))
            let daemon = try await workspace.startDaemon(documents: ["talk.txt"], niceness: 7)
            _ = try await daemon.join(label: "client")  // the loop is up and serving
            var loopThreads: [(tid: String, nice: Int?)] = []
            for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task") {
                let comm = try readProcFile("/proc/\(daemon.pid)/task/\(tid)/comm").trimmingCharacters(in: .whitespacesAndNewlines)
                guard comm == "pagesyncd-loop" else { continue }
                // /proc/<pid>/task/<tid>/stat: "tid (comm) state ..."; nice is field 19.
                let stat = try readProcFile("/proc/\(daemon.pid)/task/\(tid)/stat")
                let fields = stat[stat.lastIndex(of: ")")!...].split(separator: " ")
                loopThreads.append((tid, fields.count > 17 ? Int(fields[17]) : nil))
            }
            #expect(loopThreads.count == 1, "one thread named pagesyncd-loop, got \(loopThreads)")
            #expect(loopThreads.first?.nice == 7, "the loop thread's nice value: \(loopThreads)")
        }
    }
}
