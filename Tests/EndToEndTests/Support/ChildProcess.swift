import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, with every signal unblocked and at its default
/// disposition. Only file descriptors 0-2 are inherited: the child closes every other one as it
/// starts (`posix_spawn_file_actions_addclosefrom_np`), not only the harness's own (which are
/// close-on-exec anyway).
///
/// That matters because tests run in parallel in one process, and Foundation's `Process` (still
/// used by some tests, and by Foundation itself) learns that its child ended only when the end of
/// a socket pair it gave that child is closed everywhere; the pair is not close-on-exec. A child
/// spawned here while another test was starting a `Process` inherited that end, and the other
/// test's `Process` then looked alive until this child ended, seconds after it had really exited
/// (SystemdDaemonTests' "daemon did not exit after SIGTERM").
///
/// Foundation's `Process` is not used for the daemon: it spawns from a dispatch worker thread, and
/// the child inherits that thread's signal mask, which blocks SIGHUP, SIGINT and SIGTERM (and
/// SIGPIPE is ignored). A daemon started that way never sees the signals its tests send.
final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    let pid: pid_t
    private let ended = Mutex<Termination?>(nil)

    /// Spawns `executable` with `arguments`; stdin is /dev/null, stdout and stderr go to `outputFD`.
    /// With `stdioFD`, stdin and stdout are that descriptor instead (one end of a socket pair, for
    /// a filter like `openssl s_client`) and only stderr goes to `outputFD`.
    /// `environment` adds to (or replaces in) this process's environment; the variables named in
    /// `unsetting` are left out.
    init(executable: String, arguments: [String], outputFD: Int32, stdioFD: Int32? = nil,
         environment: [String: String] = [:], unsetting: Set<String> = []) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdioFD {
            posix_spawn_file_actions_adddup2(&actions, stdioFD, 0)
            posix_spawn_file_actions_adddup2(&actions, stdioFD, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, outputFD, 1)
        }
        posix_spawn_file_actions_adddup2(&actions, outputFD, 2)
        // After the dup2s: closes the originals too, and everything else not close-on-exec.
        try Self.closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var inherited: [String] = []
        var e = environ
        while let entry = e.pointee {
            let text = String(cString: entry)
            let name = String(text.prefix { $0 != "=" })
            if environment[name] == nil && !unsetting.contains(name) { inherited.append(text) }
            e += 1
        }
        let envp: [UnsafeMutablePointer<CChar>?] = (inherited + environment.map { "\($0.key)=\($0.value)" }).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw HarnessError("posix_spawn \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np` (a GNU extension the Glibc module
    /// does not export), looked up at run time.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil /* RTLD_DEFAULT */, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// Makes the child close every descriptor from 3 up as it starts.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {
        guard let addCloseFrom else {
            throw HarnessError("posix_spawn_file_actions_addclosefrom_np is missing (glibc older than 2.34)")
        }
        let result = addCloseFrom(&actions, 3)
        guard result == 0 else { throw HarnessError("posix_spawn_file_actions_addclosefrom_np: \(String(cString: strerror(result)))") }
    }

    /// How the process ended, or nil while it runs. Reaps the child the first time it is seen ended.
    var termination: Termination? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            guard result == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out (they are C macros).
            let signal = status & 0x7F
            ended = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
            return ended
        }
    }

    /// Whether the process still runs.
    var isRunning: Bool { termination == nil }

    /// Waits up to `timeout` for the process to end; nil if it is still running then.
    func wait(timeout: Duration) async throws -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let termination { return termination }
            try await Task.sleep(for: .milliseconds(5))
        }
        return termination
    }

    /// Sends `signal` unless the process was already reaped (its pid may have been reused).
    func send(signal: Int32) {
        if termination == nil { kill(pid, signal) }
    }

    /// SIGKILL, then waits (blocking, at most 5 s) until the child is reaped. A child left a
    /// zombie makes Swift Testing's exit-test monitor (waitid on every child) spin forever.
    func killAndReap() {
        send(signal: SIGKILL)
        for _ in 0..<500 where termination == nil { usleep(10_000) }
    }
}
