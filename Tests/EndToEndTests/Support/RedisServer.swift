import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on a free port, for one test: without persistence unless
/// `persistence` gives its options (`["--appendonly", "yes"]`); its files go in the workspace.
final class RedisServer: @unchecked Sendable {
    let port: UInt16
    private var process: ChildProcess?
    private let log: URL
    private let directory: URL
    private let persistence: [String]

    /// Starts redis-server in `workspace` and waits until it answers; with `startNow` false
    /// only picks its free port (``start()`` starts it later).
    init(in workspace: Workspace, port: UInt16? = nil, persistence: [String] = ["--save", "", "--appendonly", "no"],
         startNow: Bool = true) async throws {
        self.port = try port ?? freeLoopbackPort()
        log = workspace.url("redis-\(self.port).log")
        directory = workspace.url("redis-\(self.port)")
        self.persistence = persistence
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if startNow { try await start() }
    }

    var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts (or restarts) the server: empty, or with what its persistence kept.
    func start() async throws {
        let fd = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { Glibc.close(fd) }
        process = try ChildProcess(executable: try Self.executable(),
                                   arguments: ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path] + persistence,
                                   outputFD: fd)
        // Generous: on a loaded 2-core machine running the parallel suite, exec and start-up alone
        // have taken over 20 s. An exit (a port taken meanwhile, say) fails at once, with its log.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let ended = process?.termination {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw HarnessError("redis-server on \(port) exited (\(ended)) before listening:\n\(output.suffix(2000))")
            }
            if (try? await LineClient.connect(port: port, label: "redis probe")).map({ $0.close(); return true }) == true { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw HarnessError("redis-server did not listen on \(port) within 60 s; its log:\n\(output.suffix(2000))")
    }

    /// `kill -9`: the data (kept only in memory) is gone.
    func kill() async throws {
        process?.send(signal: SIGKILL)
        _ = try await process?.wait(timeout: .seconds(10))
        process = nil
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, ...) to the server.
    func send(signal: Int32) {
        process?.send(signal: signal)
    }

    /// Runs one command (arguments without spaces, sent inline) on a connection of its own and
    /// returns its reply: a status, error or integer line as sent (`+OK`, `-ERR ...`, `:1`), a
    /// bulk string's value, or `nil` for a null one.
    @discardableResult
    func command(_ line: String) async throws -> String? {
        let client = try await LineClient.connect(port: port, label: "redis admin")
        defer { client.close() }
        try await client.send(line)
        let first = try await client.readLine()
        guard first.hasPrefix("$") else { return first }
        return first == "$-1" ? nil : try await client.readLine()
    }

    deinit { process?.killAndReap() }

    /// `redis-server` from PATH (scripts/test installs it).
    private static func executable() throws -> String {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") + ["/usr/sbin", "/usr/bin"]
        for dir in dirs where access("\(dir)/redis-server", X_OK) == 0 { return "\(dir)/redis-server" }
        throw HarnessError("redis-server is not installed (apt-get install redis-server)")
    }
}
