import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How a daemon process ended.
enum Termination: Equatable, Sendable, CustomStringConvertible {
    /// It called exit with this status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)

    var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// A temporary directory for one test: its documents, its state directory, its daemons' logs.
///
/// Every daemon started from a workspace is killed when the workspace is cleaned up, and a daemon
/// that died on its own (a crash) is reported as a test issue with its stderr.
final class Workspace: @unchecked Sendable {
    /// The temporary directory; removed on cleanup unless `PAGESYNC_E2E_KEEP` is set.
    let root: URL
    /// `<root>/state`, passed as `--state-dir` by default.
    let stateDir: URL
    private let daemons = Mutex<[Daemon]>([])

    /// Creates a fresh, empty directory under the system temp dir.
    init() throws {
        var template = Array((NSTemporaryDirectory() + "/pagesync-e2e-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        root = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        stateDir = root.appendingPathComponent("state", isDirectory: true)
        try FileManager.default.createDirectory(at: stateDir, withIntermediateDirectories: true)
    }

    /// The URL of `name` inside the workspace.
    func url(_ name: String) -> URL { root.appendingPathComponent(name) }

    /// Writes `contents` to `name` atomically (temp file + rename) and returns its URL.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> URL {
        try write(name, bytes: Array(contents.utf8))
    }

    /// Writes `bytes` to `name` atomically (temp file + rename) and returns its URL.
    @discardableResult
    func write(_ name: String, bytes: [UInt8]) throws -> URL {
        let url = url(name)
        try Data(bytes).write(to: url, options: .atomic)
        return url
    }

    /// Starts `pagesyncd` with `documents` (file names in this workspace, in order) and `arguments`.
    /// With `addDefaults` it listens on an ephemeral port with `--state-dir <root>/state` unless
    /// `arguments` say otherwise; without, the arguments are passed as they are (config-file tests).
    /// `niceness`: run it under `nice -n <niceness>` (the process's nice value).
    func startDaemon(documents: [String] = [], arguments: [String] = [], addDefaults: Bool = true,
                     environment: [String: String] = [:], niceness: Int? = nil, openFileLimit: Int? = nil) async throws -> Daemon {
        var args = documents.map { url($0).path }
        if addDefaults && !arguments.contains("--listen") { args += ["--listen", "127.0.0.1:0"] }
        if addDefaults && !arguments.contains("--state-dir") { args += ["--state-dir", stateDir.path] }
        args += arguments
        let index = daemons.withLock { $0.count }
        let daemon = try Daemon(arguments: args, log: root.appendingPathComponent("pagesyncd-\(index).log"), environment: environment,
                                niceness: niceness, openFileLimit: openFileLimit)
        daemons.withLock { $0.append(daemon) }
        try await daemon.waitUntilListening()
        return daemon
    }

    /// Kills every daemon still running, reports daemons that died unexpectedly, removes the directory.
    func cleanup() async {
        for daemon in daemons.withLock({ $0 }) {
            await daemon.cleanup()
        }
        if ProcessInfo.processInfo.environment["PAGESYNC_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: root)
        }
    }
}

/// Runs `body` with a fresh workspace and always cleans it up.
func withWorkspace<T>(_ body: (Workspace) async throws -> T) async throws -> T {
    let workspace = try Workspace()
    do {
        let result = try await body(workspace)
        await workspace.cleanup()
        return result
    } catch {
        await workspace.cleanup()
        throw error
    }
}

/// Runs `body` with one daemon serving `documents` (name, contents; the first is the default room).
func withDaemon<T>(_ documents: KeyValuePairs<String, String>, arguments: [String] = [],
                   _ body: (Daemon, Workspace) async throws -> T) async throws -> T {
    try await withWorkspace { workspace in
        for (name, contents) in documents { try workspace.write(name, contents) }
        let daemon = try await workspace.startDaemon(documents: documents.map(\.key), arguments: arguments)
        return try await body(daemon, workspace)
    }
}

/// One running `pagesyncd` process.
final class Daemon: @unchecked Sendable {
    /// The TCP port it listens on (learned from its `listening on` log line).
    private(set) var port: UInt16 = 0
    /// Its process id.
    let pid: Int32
    /// Its argument list, for messages.
    let arguments: [String]
    private let process: ChildProcess
    private let log: URL
    /// Set once the test itself asked the process to end (a signal), so an exit is not a crash.
    private let exitExpected = Atomic<Bool>(false)
    private let connections = Atomic<Int>(0)

    /// `niceness` runs it under nice(1), `openFileLimit` under prlimit(1) with that soft and hard
    /// `RLIMIT_NOFILE`; both exec the daemon in place, so the pid is the daemon's.
    fileprivate init(arguments: [String], log: URL, environment: [String: String] = [:], niceness: Int? = nil,
                     openFileLimit: Int? = nil) throws {
        self.arguments = arguments
        self.log = log
        let logFD = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard logFD >= 0 else { throw HarnessError("open \(log.path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(logFD) }
        let binary = try Binaries.pagesyncd()
        var command = [binary] + arguments
        if let openFileLimit { command = ["/usr/bin/prlimit", "--nofile=\(openFileLimit):\(openFileLimit)", "--"] + command }
        if let niceness { command = ["/usr/bin/nice", "-n", "\(niceness)"] + command }
        process = try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()),
                                   outputFD: logFD, environment: environment)
        pid = process.pid
    }

    /// Everything the daemon wrote to stderr (and stdout) so far.
    var stderr: String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// What each descriptor the daemon holds refers to (`/proc/<pid>/fd`), for failure messages.
    func openDescriptors() -> String {
        let directory = "/proc/\(pid)/fd"
        let fds = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted { Int($0) ?? 0 < Int($1) ?? 0 }
        let described = fds.map { "\($0) -> \((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) ?? "?")" }
        return "\(fds.count) descriptor(s): \(described.joined(separator: ", "))"
    }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Reads stderr until the `listening on 127.0.0.1:<port>` line appears, and the `serving <n>
    /// room(s): ...; state in ...` line the daemon logs right after its listening lines (the
    /// last of its start): a test may read the whole start-up log at once. The two are
    /// separate writes, and the second was sometimes not there yet (a failed clean-clone run).
    fileprivate func waitUntilListening() async throws {
        // A guard against a daemon that never listens, not a measure of start-up time: generous,
        // because a machine starved by other work (a benchmark at nice -15) can delay a start a lot.
        let deadline = ContinuousClock.now + .seconds(max(30, 6 * stepTimeoutSeconds))
        let pattern = /listening on 127\.0\.0\.1:(\d+)/
        let served = /serving \d+ room\(s\)/
        while true {
            let pastDeadline = ContinuousClock.now >= deadline
            let text = stderr
            if let match = text.firstMatch(of: pattern), let port = UInt16(match.1), text.contains(served) {
                self.port = port
                return
            }
            if !process.isRunning {
                exitExpected.store(true, ordering: .relaxed)
                throw HarnessError("pagesyncd \(arguments.joined(separator: " ")) exited (\(termination?.description ?? "?")) before listening; stderr:\n\(tail(text))")
            }
            if pastDeadline {
                throw HarnessError("pagesyncd did not log `listening on 127.0.0.1:<port>` and `serving <n> room(s)` in time; stderr:\n\(tail(text))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Connects a new client and returns it; the greeting is not read.
    func connect(label: String? = nil, receiveBufferSize: Int? = nil, sendBufferSize: Int? = nil) async throws -> LineClient {
        let n = connections.wrappingAdd(1, ordering: .relaxed).newValue
        return try await LineClient.connect(port: port, label: label ?? "client \(n)",
                                            receiveBufferSize: receiveBufferSize, sendBufferSize: sendBufferSize)
    }

    /// Connects a new client and reads its `HELLO` line; fails if the first line is anything else.
    func join(label: String? = nil, receiveBufferSize: Int? = nil) async throws -> (LineClient, ServerLine) {
        let client = try await connect(label: label, receiveBufferSize: receiveBufferSize)
        let hello = try await client.expectLine(prefix: "HELLO pagesync/1 ")
        return (client, hello)
    }

    /// False when the tests run under a sanitizer (`scripts/test --sanitize` sets
    /// `PAGESYNC_SANITIZER`): ASan's shadow memory and quarantine of freed blocks, and TSan's
    /// shadow memory, make RSS say nothing about the daemon's own memory, and their checks on
    /// every memory access change what costs CPU time (1,000 stalled followers cost 5.6 ms of
    /// CPU per change under ASan, against 0.2–0.7 ms), and every step 5–15 times slower, so the
    /// RSS, CPU-time and latency budgets are not checked there. The rest of each test still runs.
    static let resourceBudgetsApply = (ProcessInfo.processInfo.environment["PAGESYNC_SANITIZER"] ?? "").isEmpty

    /// `count` in a normal run, a tenth of it under a sanitizer. For the few tests whose point
    /// includes sheer volume (10^5 and 10^6 changes): ASan and TSan make the daemon 5–15 times
    /// slower, and at full volume those tests ran into their time limits (the first whole TSan
    /// run). A tenth still crosses every threshold they test (journal compaction at 1 MiB,
    /// conflation beyond a full socket buffer), so the sanitizer still sees those paths.
    static func volume(_ count: Int) -> Int {
        resourceBudgetsApply ? count : count / 10
    }

    /// Waits (at most 30 s) until the daemon has logged `reloaded:` `count` times: a SIGHUP's
    /// reload is done. Throws with its stderr otherwise.
    func waitForReload(count: Int = 1) async throws {
        for _ in 0..<1500 where stderr.components(separatedBy: "reloaded: ").count <= count {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard stderr.components(separatedBy: "reloaded: ").count > count else {
            throw HarnessError("pagesyncd did not log reload \(count); stderr:\n\(stderr)")
        }
    }

    /// The resident set size from `/proc/<pid>/status` (VmRSS), in KiB.
    func rssKiB() throws -> Int {
        let status = try readProcFile("/proc/\(pid)/status")
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else {
            throw HarnessError("no VmRSS in /proc/\(pid)/status")
        }
        return kib
    }

    /// CPU time the daemon's threads have used so far, from each `/proc/<pid>/task/<tid>/schedstat`
    /// (nanoseconds on the CPU, its first field). Unlike wall-clock latency, this does not grow
    /// when the machine is busy with other tests, so a guard on it does not flake under load.
    func cpuTime() throws -> Duration {
        var nanoseconds: Int64 = 0
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            // A thread may end between the listing and the read.
            guard let stat = try? readProcFile("/proc/\(pid)/task/\(tid)/schedstat"),
                  let field = stat.split(separator: " ").first, let value = Int64(field) else { continue }
            nanoseconds += value
        }
        return .nanoseconds(nanoseconds)
    }

    /// Sends `signal` to the daemon. SIGTERM, SIGINT and SIGKILL mark its exit as expected.
    func send(signal: Int32) {
        if [SIGTERM, SIGINT, SIGKILL].contains(signal) { exitExpected.store(true, ordering: .relaxed) }
        process.send(signal: signal)
    }

    /// The daemon will end by itself (killed by a fault it was started under): not a failure.
    func expectExitWithoutSignal() {
        exitExpected.store(true, ordering: .relaxed)
    }

    /// `kill -9`.
    func kill9() {
        send(signal: SIGKILL)
    }

    /// How the process ended, or nil while it runs.
    var termination: Termination? { process.termination }

    /// Waits up to `timeout` for the process to end and returns how it ended; fails on timeout.
    func waitForExit(timeout: Duration) async throws -> Termination {
        if let termination = try await process.wait(timeout: timeout) { return termination }
        throw HarnessError("pagesyncd still running \(timeout) later; stderr:\n\(tail(stderr))")
    }

    /// Kills the process if it still runs; records an issue if it had died on its own.
    fileprivate func cleanup() async {
        if let termination {
            if !exitExpected.load(ordering: .relaxed) {
                Issue.record("pagesyncd exited unexpectedly (\(termination)); stderr:\n\(tail(stderr))")
            }
            return
        }
        exitExpected.store(true, ordering: .relaxed)
        process.send(signal: SIGKILL)
        _ = try? await process.wait(timeout: .seconds(10))
    }
}
