import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Restarts, signals, the command line and the configuration file.
@Suite("Lifecycle", .timeLimit(.minutes(1)))
struct LifecycleTests {
    @Test("kill -9 right after an OK, then restart: the acknowledged page is kept and versions go on up")
    func killNineKeepsAcknowledgedPage() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, _) = try await first.join()
            try await client.ok("NAME ann")
            try await client.ok("GOTO 5")
            let acknowledged = try await client.ok("NEXT")
            first.kill9()
            #expect(try await first.waitForExit(timeout: .seconds(5)) == .signaled(SIGKILL))
            #expect(acknowledged.page == 6 && acknowledged.version == 2)
            #expect(FileManager.default.fileExists(atPath: workspace.stateDir.appendingPathComponent("journal").path))

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (again, hello) = try await second.join()
            #expect(hello.page == 6, "\(hello)")
            #expect(hello.version == 2)
            #expect(hello["by"] == "ann")
            let next = try await again.ok("PREV")
            #expect(next.page == 5 && next.version == 3, "the version continues upward: \(next)")
        }
    }

    @Test("SIGHUP after editing the document changes pages=, pushed as PAGE; clients stay; the page is clamped")
    func sighupReindexes() async throws {
        try await withDaemon(["notes.txt": Documents.formFeed(pages: 3)]) { daemon, workspace in
            let (a, _) = try await daemon.join(label: "A")
            let (b, hello) = try await daemon.join(label: "B")
            try await a.ok("LAST")
            #expect(try await b.readServerLine().version == 1)
            _ = try await a.sync()

            try workspace.write("notes.txt", Documents.formFeed(pages: 5, prefix: "grown"))
            daemon.send(signal: SIGHUP)
            for client in [a, b] {
                let event = try await client.readServerLine()
                #expect(event.kind == "PAGE" && event.pages == 5 && event.page == 3, "\(client.label): \(event)")
                #expect((event.version ?? 0) > 1 && event["doc"] != hello["doc"], "\(event)")
                #expect(try await client.sync() == [], "one event per change")
            }
            #expect(try await a.command("TEXT 5").lines == ["grown page 5"])

            try workspace.write("notes.txt", Documents.formFeed(pages: 2, prefix: "shrunk"))
            daemon.send(signal: SIGHUP)
            for client in [a, b] {
                let event = try await client.readServerLine()
                #expect(event.kind == "PAGE" && event.pages == 2 && event.page == 2, "\(client.label): clamped? \(event)")
            }
            let status = try await b.ok("STATUS")
            #expect(status.pages == 2 && status.page == 2 && status.int("clients") == 2)
            #expect(try await a.command("TEXT").lines == ["shrunk page 2"])
            #expect(daemon.isRunning)
        }
    }

    @Test("editing a document on disk re-indexes its room without any signal (in place and by rename)")
    func fileChangesAreNoticed() async throws {
        try await withDaemon(["notes.txt": Documents.formFeed(pages: 3)]) { daemon, workspace in
            let (a, hello) = try await daemon.join(label: "A")
            #expect(hello.pages == 3)

            // In place, as `cat > notes.txt` does.
            try workspace.write("notes.txt", Documents.formFeed(pages: 6, prefix: "grown"))
            let grown = try await a.readServerLine()
            #expect(grown.kind == "PAGE" && grown.pages == 6 && grown.page == 1, "\(grown)")
            #expect(grown["doc"] != hello["doc"])

            // Replaced by a rename, as editors save.
            _ = try workspace.write("notes.txt.new", Documents.formFeed(pages: 2, prefix: "renamed"))
            #expect(rename(workspace.url("notes.txt.new").path, workspace.url("notes.txt").path) == 0)
            let renamed = try await a.readServerLine()
            #expect(renamed.kind == "PAGE" && renamed.pages == 2, "\(renamed)")
            #expect(try await a.command("TEXT 2").lines == ["renamed page 2"])
        }
    }

    @Test("a document directory that cannot be watched at start (no inotify instance left) is watched once it can be, and an edit made meanwhile is picked up")
    func unwatchableDirectoryIsWatchedLater() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 3))
            // Take every inotify instance this user may have (fs.inotify.max_user_instances), and
            // keep taking those other processes release, so the daemon's watch cannot start.
            let hoard = InotifyHoard()
            defer { hoard.releaseAll() }
            var daemon: Daemon?
            for _ in 0..<3 where daemon == nil {
                hoard.takeAll()
                let started = try await workspace.startDaemon(documents: ["notes.txt"])
                if started.stderr.contains("cannot watch") {
                    daemon = started
                } else {
                    started.send(signal: SIGTERM)  // it found an instance after all: again
                    _ = try await started.waitForExit(timeout: .seconds(5))
                }
            }
            guard let daemon else {
                // Instances are per user: another process (or a per-process fd limit below
                // fs.inotify.max_user_instances) let the daemon have one three times running.
                try Test.cancel("could not keep every inotify instance taken while the daemon started")
            }
            #expect(daemon.stderr.contains("trying again every second"), "\(tail(daemon.stderr))")
            let (a, hello) = try await daemon.join(label: "A")
            #expect(hello.pages == 3)
            // Edited while nobody watches; the watch starts once instances are free again.
            try workspace.write("notes.txt", Documents.formFeed(pages: 5, prefix: "edited"))
            hoard.releaseAll()
            let event = try await a.readServerLine()
            #expect(event.kind == "PAGE" && event.pages == 5, "\(event)")
            #expect(daemon.stderr.contains("for changes now"), "\(tail(daemon.stderr))")
            // And later edits are seen as they happen.
            try workspace.write("notes.txt", Documents.formFeed(pages: 2, prefix: "again"))
            #expect(try await a.readServerLine().pages == 2)
        }
    }

    @Test("SIGTERM and SIGINT: clients get BYE, the state is saved, exit status 0 within about a second",
          arguments: [SIGTERM, SIGINT])
    func shutdownSaysByeAndExitsZero(signal: Int32) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 4))
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"], arguments: ["--no-fsync"])
            let (a, _) = try await daemon.join(label: "A")
            let (b, _) = try await daemon.join(label: "B")
            try await a.ok("GOTO 3")
            #expect(try await b.readServerLine().page == 3)
            _ = try await a.sync()

            let start = ContinuousClock.now
            daemon.send(signal: signal)
            for client in [a, b] {
                let bye = try await client.readServerLine()
                #expect(bye.kind == "BYE", "\(client.label): \(bye)")
                try await client.expectClosed()
            }
            let termination = try await daemon.waitForExit(timeout: shutdownGuard)
            let elapsed = ContinuousClock.now - start
            #expect(termination == .exited(0), "\(termination); stderr:\n\(tail(daemon.stderr))")
            #expect(elapsed < shutdownGuard, "shutdown took \(elapsed)")

            let restarted = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, hello) = try await restarted.join()
            #expect(hello.page == 3 && hello.version == 1, "state saved on shutdown: \(hello)")
        }
    }

    @Test("a second SIGTERM or SIGINT (and a SIGHUP) while stopping is ignored: the stop completes and exits 0",
          arguments: [SIGTERM, SIGINT])
    func secondSignalWhileStopping(signal: Int32) async throws {
        try await withWorkspace { workspace in
            // One page of about 1 MiB: a client that asks for it 40 times and reads nothing keeps
            // the stop going for its half second of grace (more than socket buffers hold), so
            // the second signal surely comes while stopping.
            let line = String(repeating: "x", count: 99) + "\n"
            try workspace.write("big.txt", String(repeating: line, count: 10_000) + "\u{0C}end\n")
            let daemon = try await workspace.startDaemon(documents: ["big.txt"])
            let (stalled, _) = try await daemon.join(label: "stalled", receiveBufferSize: 4096)
            _ = try await stalled.sendUntilStalled(Array(String(repeating: "TEXT 1\n", count: 40).utf8))
            // The other stop signal at once: pending together, both reach the daemon (the same
            // signal twice could merge into one), so one of them surely comes while stopping.
            daemon.send(signal: signal)
            daemon.send(signal: signal == SIGTERM ? SIGINT : SIGTERM)
            // And the same signal once the stop is under way, with a SIGHUP: before the fix these
            // found the default action back and killed the daemon.
            for _ in 0..<500 where !daemon.stderr.contains("shutting down") {
                try await Task.sleep(for: .milliseconds(10))
            }
            daemon.send(signal: signal)
            daemon.send(signal: SIGHUP)
            let termination = try await daemon.waitForExit(timeout: shutdownGuard)
            #expect(termination == .exited(0), "\(termination); stderr:\n\(tail(daemon.stderr))")
            #expect(daemon.stderr.contains("already stopping"), "\(tail(daemon.stderr))")
            #expect(daemon.stderr.contains("stopped"), "\(tail(daemon.stderr))")
        }
    }

    @Test("stop signals sent over and over from the start of a stop until the process is gone: it still exits 0, having recorded a clean stop",
          arguments: [SIGTERM, SIGINT])
    func stopSignalsUntilGone(signal: Int32) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 3))
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, _) = try await daemon.join()
            try await client.ok("NEXT")
            daemon.send(signal: signal)
            // Every millisecond until it has exited: some land after its signal watchers closed,
            // where libuv's default action (before the fix) killed it.
            var sent = 0
            while daemon.isRunning && sent < 10_000 {
                daemon.send(signal: signal)
                sent += 1
                try await Task.sleep(for: .milliseconds(1))
            }
            let termination = try await daemon.waitForExit(timeout: shutdownGuard)
            #expect(termination == .exited(0), "\(termination) after \(sent) signals; stderr:\n\(tail(daemon.stderr))")
            #expect(daemon.stderr.contains("stopped"), "\(tail(daemon.stderr))")
        }
    }

    @Test("pagesyncd --help exits 0 and documents the command-line flags")
    func helpExitsZero() async throws {
        let result = try await runProcess(Binaries.pagesyncd(), ["--help"])
        #expect(result.status == 0, "\(result.output)")
        for flag in ["--listen", "--config", "--state-dir", "--max-clients", "--max-line", "--split", "--wrap", "--token", "--log-level", "--durability", "--max-clients-per-address", "--idle-timeout", "--who-page-size"] {
            #expect(result.output.contains(flag), "--help does not mention \(flag)")
        }
    }

    @Test("a bad flag value is refused at start with a message", arguments: [
        ["--split", "sometimes"],
        ["--listen", "not-an-address"],
        ["--max-line", "10"],
    ])
    func badFlagValueIsRefused(arguments: [String]) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", "one\n")
            let result = try await runProcess(Binaries.pagesyncd(), [workspace.url("notes.txt").path, "--state-dir", workspace.stateDir.path] + arguments
                + (arguments.contains("--listen") ? [] : ["--listen", "127.0.0.1:0"]))
            #expect(result.status != 0, "\(arguments) was accepted: \(result.output)")
            #expect(!result.output.isEmpty && !result.output.contains("listening on"), "\(result.output)")
        }
    }

    @Test("an unknown flag is an error, not silently ignored")
    func unknownFlagFails() async throws {
        let result = try await runProcess(Binaries.pagesyncd(), ["--listen", "127.0.0.1:0", "--no-such-flag"])
        #expect(result.status != 0, "\(result.output)")
    }
}

/// What a finished process printed and how it exited.
struct ProcessResult: Sendable {
    /// stdout and stderr together.
    var output: String
    /// The exit status (128 + the signal number if a signal killed it, as shells report it).
    var status: Int32
}

/// Runs `executable` with `arguments` (stdin from /dev/null, `environment` added to this
/// process's), waits up to `timeout`, returns its output.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                timeout: Duration = .seconds(30)) async throws -> ProcessResult {
    let workspace = try Workspace()
    defer { try? FileManager.default.removeItem(at: workspace.root) }
    let outputURL = workspace.url("output")
    let fd = open(outputURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw HarnessError("open \(outputURL.path) failed") }
    let process = try ChildProcess(executable: executable, arguments: arguments, outputFD: fd, environment: environment)
    Glibc.close(fd)
    guard let termination = try await process.wait(timeout: timeout) else {
        process.send(signal: SIGKILL)
        _ = try await process.wait(timeout: .seconds(5))
        throw HarnessError("\(executable) \(arguments) did not finish within \(timeout)")
    }
    let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
    switch termination {
    case .exited(let status): return ProcessResult(output: output, status: status)
    case .signaled(let signal): return ProcessResult(output: output, status: 128 + signal)
    }
}

/// Holds inotify instances (each `inotify_init1` is one, up to the user's
/// `fs.inotify.max_user_instances`) so a daemon started meanwhile cannot watch a directory.
/// While it holds any, a thread keeps taking the ones other processes release.
private final class InotifyHoard: @unchecked Sendable {
    private let lock = NSLock()
    private var fds: [Int32] = []
    private var holding = false

    /// Takes every instance left, then keeps taking released ones until ``releaseAll()``.
    func takeAll() {
        lock.withLock { holding = true }
        while takeOne() {}
        Thread.detachNewThread { [self] in
            while lock.withLock({ holding }) {
                if !takeOne() { usleep(500) }
            }
        }
    }

    private func takeOne() -> Bool {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { return false }
        lock.withLock {
            if holding { fds.append(fd) } else { close(fd) }
        }
        return true
    }

    func releaseAll() {
        let taken = lock.withLock {
            holding = false
            defer { fds.removeAll() }
            return fds
        }
        for fd in taken { close(fd) }
    }
}

