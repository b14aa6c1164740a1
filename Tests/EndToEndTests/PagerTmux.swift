import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One tmux server for one pager test, on its own socket (`tmux -L <unique>`), so tests can run
/// in parallel and never touch a person's tmux. Each "terminal" is a tmux session of a fixed
/// size running `/bin/sh` with the prompt `$ `; commands are typed into it as a person would.
///
/// Reading the screen is `capture-pane -p`: what a person would see, without colours. Waiting
/// polls the screen until it shows what is expected; the timeout only guards against a hang and
/// its failure message quotes the last screen.
final class PagerTmux: @unchecked Sendable {
    private static let counter = Atomic<Int>(0)

    /// The tmux socket name, unique per test.
    let socket: String
    private let workspace: Workspace
    private let tmuxPath: String

    /// How long to wait for a screen before failing (a hang guard, never an assertion on speed).
    static let screenTimeout: Duration = .seconds(max(10, 2 * stepTimeoutSeconds))

    fileprivate init(workspace: Workspace) throws {
        guard let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw HarnessError("tmux not found; install it (apt-get install tmux)") }
        tmuxPath = tmux
        self.workspace = workspace
        let n = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        socket = "pagesync-e2e-\(getpid())-\(n)"
    }

    /// Runs `tmux -L <socket> <arguments>` and returns its output; throws if it fails.
    @discardableResult
    func tmux(_ arguments: [String]) async throws -> String {
        let result = try await runPagerTestProcess("/usr/bin/env",
                                                   ["LC_ALL=C.UTF-8", tmuxPath, "-u", "-L", socket, "-f", "/dev/null"] + arguments,
                                                   in: workspace)
        guard result.status == 0 else {
            throw HarnessError("tmux \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
        return result.output
    }

    /// Opens terminal `name` (a detached session) of `columns`x`rows` running `/bin/sh`, and
    /// waits for its prompt.
    func openTerminal(_ name: String, columns: Int = 80, rows: Int = 24) async throws {
        try await tmux(["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)",
                        "env PS1='$ ' ENV= /bin/sh"])
        try await tmux(["set-option", "-t", name, "remain-on-exit", "on"])
        try await waitFor(name, "the shell prompt") { $0.hasPrefix("$") }
    }

    /// Types `text` literally into terminal `name`, then Enter when `enter` is true.
    func type(_ name: String, _ text: String, enter: Bool = false) async throws {
        try await tmux(["send-keys", "-t", name, "-l", text])
        if enter { try await press(name, "Enter") }
    }

    /// Presses tmux key names (`Space`, `Enter`, `C-z`, `Right`, `End`, ...) in terminal `name`.
    func press(_ name: String, _ keys: String...) async throws {
        try await tmux(["send-keys", "-t", name] + keys)
    }

    /// The visible screen of terminal `name`, one line per row, trailing blanks removed.
    func screen(_ name: String) async throws -> String {
        try await tmux(["capture-pane", "-p", "-t", name])
    }

    /// The visible screen of terminal `name` with its colours and styles as escape sequences
    /// (`capture-pane -e`), for checking what reached the terminal.
    func screenWithEscapes(_ name: String) async throws -> String {
        try await tmux(["capture-pane", "-p", "-e", "-t", name])
    }

    /// The status line: the last non-empty row of the screen.
    func statusLine(_ name: String) async throws -> String {
        try await screen(name).split(separator: "\n").last.map(String.init) ?? ""
    }

    /// tmux's view of the terminal: whether the alternate screen is on and the cursor visible.
    func terminalModes(_ name: String) async throws -> (alternateScreen: Bool, cursorVisible: Bool) {
        let text = try await tmux(["display-message", "-p", "-t", name, "#{alternate_on} #{cursor_flag}"])
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        return (parts.first == "1", parts.dropFirst().first == "1")
    }

    /// Waits until terminal `name` has left the alternate screen (the pager ended or stopped), so
    /// that keys typed next go to the shell, not to the pager's last read.
    func waitForShell(_ name: String) async throws {
        let deadline = ContinuousClock.now + Self.screenTimeout
        while ContinuousClock.now < deadline {
            if try await !terminalModes(name).alternateScreen { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("terminal \(name) never left the alternate screen; its screen:\n\(try await screen(name))")
    }

    /// Polls the screen of `name` until `condition` holds; returns that screen. Fails with the
    /// last screen after `timeout` (``screenTimeout`` unless a step is known to be long).
    @discardableResult
    func waitFor(_ name: String, _ what: String, timeout: Duration = PagerTmux.screenTimeout,
                 _ condition: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            last = try await screen(name)
            if condition(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("terminal \(name) never showed \(what); its screen:\n\(last)")
    }

    /// Waits until terminal `name` shows every one of `texts`.
    @discardableResult
    func waitFor(_ name: String, showing texts: String...) async throws -> String {
        try await waitFor(name, texts.map { "\"\($0)\"" }.joined(separator: " and ")) { screen in
            texts.allSatisfy { screen.contains($0) }
        }
    }

    /// Kills the tmux server and every process in it, and removes its socket file.
    func kill() async {
        _ = try? await runPagerTestProcess("/usr/bin/env", [tmuxPath, "-L", socket, "kill-server"], in: workspace)
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        unlink("\(directory)/tmux-\(getuid())/\(socket)")
    }
}

/// Runs `body` with a fresh tmux server and always kills it afterwards.
func withTmux<T>(_ workspace: Workspace, _ body: (PagerTmux) async throws -> T) async throws -> T {
    let tmux = try PagerTmux(workspace: workspace)
    do {
        let result = try await body(tmux)
        await tmux.kill()
        return result
    } catch {
        await tmux.kill()
        throw error
    }
}

/// Quotes `text` for `/bin/sh`.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// The command line that starts the pager under test against `daemon`, quoted for `/bin/sh`.
func pagerCommand(_ daemon: Daemon, _ arguments: [String] = []) throws -> String {
    ([try Binaries.path(of: "pagesync"), "127.0.0.1:\(daemon.port)"] + arguments).map(shellQuoted).joined(separator: " ")
}

/// What a finished process printed (stdout and stderr together) and its exit status.
struct PagerTestProcessResult {
    /// Everything written to stdout and stderr.
    var output: String
    /// The exit status (128 + signal if killed by one).
    var status: Int32
}

private let runCounter = Atomic<Int>(0)

/// Runs a program to its end with a clean signal mask (see ``ChildProcess``), its output going
/// to a file in `workspace`.
func runPagerTestProcess(_ executable: String, _ arguments: [String], in workspace: Workspace,
                         timeout: Duration = .seconds(30)) async throws -> PagerTestProcessResult {
    let path = workspace.root.path + "/run-\(runCounter.wrappingAdd(1, ordering: .relaxed).newValue).out"
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
    defer { unlink(path) }
    let process: ChildProcess
    do {
        process = try ChildProcess(executable: executable, arguments: arguments, outputFD: fd)
        Glibc.close(fd)
    } catch {
        Glibc.close(fd)
        throw error
    }
    guard let termination = try await process.wait(timeout: timeout) else {
        process.send(signal: SIGKILL)
        _ = try await process.wait(timeout: .seconds(5))
        throw HarnessError("\(executable) \(arguments) did not finish within \(timeout)")
    }
    let output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    switch termination {
    case .exited(let status): return PagerTestProcessResult(output: output, status: status)
    case .signaled(let signal): return PagerTestProcessResult(output: output, status: 128 + signal)
    }
}
