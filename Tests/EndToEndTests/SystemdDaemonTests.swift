import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The real pagesyncd under systemd's protocols: sd_notify to a test NOTIFY_SOCKET, and socket
/// activation through systemd-socket-activate.
///
/// Expects the daemon's CLI `pagesyncd --listen HOST:PORT --state-dir DIR FILE...` and, in the
/// daemon, `SystemdNotifier` + `SocketActivation.takeListenFDs()` wired in.
@Suite("pagesyncd under systemd protocols", .serialized)
struct SystemdDaemonTests {
    /// Starts pagesyncd serving one temp document, with extra environment; its stderr goes to
    /// `standardError` (default /dev/null).
    ///
    /// A ``ChildProcess``, not Foundation's `Process`: `Process` learns that its child ended only
    /// when a socket it gave the child is closed in every process, and any child another test
    /// spawned at that moment may hold a copy. The daemon then looked alive for as long as that
    /// other child ran ("daemon did not exit after SIGTERM", with STOPPING=1 sent and the daemon
    /// gone). A ChildProcess is watched with waitpid, which only this child's exit answers.
    static func launch(port: UInt16, environment extra: [String: String], in directory: URL,
                       standardError: Int32? = nil) throws -> ChildProcess {
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        let document = try SystemdE2E.writeDocument(in: directory)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let devNull = try SystemdE2E.openDevNull()
        defer { close(devNull) }
        return try ChildProcess(
            executable: binary, arguments: ["--listen", "127.0.0.1:\(port)", "--state-dir", state.path, document.path],
            outputFD: standardError ?? devNull, environment: extra,
            unsetting: ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM"])
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// Waits up to `seconds` for exit: how it ended, or nil (then it is killed and reaped).
    static func waitForExit(_ process: ChildProcess, seconds: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if let termination = process.termination { return termination }
        process.killAndReap()
        return nil
    }

    @Test func notifyLifecycleReadyStatusWatchdogReloadStop() throws {
        let directory = try SystemdE2E.temporaryDirectory("notify-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try SystemdNotifyListener()
        let port = try SystemdE2E.freePort()
        let watchdogUSec: UInt64 = 400_000            // pings expected every ~200 ms
        let process = try Self.launch(port: port, environment: [
            "NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": String(watchdogUSec),
        ], in: directory)
        defer { process.killAndReap() }

        // 1. READY=1 once listening: a client connecting right after gets the greeting.
        let startup = listener.receive(until: { $0.notifyAssignments["READY"] == "1" }, within: 15)
        print("notify: start-up datagrams:", startup.seen.map(\.text))
        try #require(startup.match != nil, "no READY=1 (daemon not wired to SystemdNotifier yet?)")
        let client = try #require(SystemdE2E.connect(port: port, retryFor: 0), "READY=1 came before the daemon listened")
        defer { close(client) }
        let greeting = try #require(SystemdE2E.readLine(client))
        #expect(greeting.hasPrefix("HELLO pagesync/1 "))

        // 2. STATUS= with rooms and clients, at start-up or soon after.
        var statuses = startup.seen.compactMap { $0.text.notifyAssignments["STATUS"] }
        // 3. WATCHDOG=1 at about half of WATCHDOG_USEC.
        var pings: [Date] = []
        let window = listener.receive(until: { _ in false }, within: 2.0)
        for (time, text) in window.seen {
            let fields = text.notifyAssignments
            if fields["WATCHDOG"] == "1" { pings.append(time) }
            if let status = fields["STATUS"] { statuses.append(status) }
        }
        print("notify: STATUS values:", statuses)
        print("notify: \(pings.count) WATCHDOG=1 pings in 2.0 s (WATCHDOG_USEC=\(watchdogUSec))")
        #expect(!statuses.isEmpty, "no STATUS= message")
        #expect(statuses.contains { $0.contains("room") }, "STATUS= does not mention rooms: \(statuses)")
        // Nominal 10 pings in 2 s. Loose bounds: loaded CI machines are slow, not fast.
        #expect((4...14).contains(pings.count), "expected ~10 WATCHDOG=1 in 2 s, got \(pings.count)")
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }
        #expect(gaps.allSatisfy { $0 < Double(watchdogUSec) / 1_000_000 }, "a ping gap reached WATCHDOG_USEC: \(gaps)")

        // 4. SIGHUP: RELOADING=1 with MONOTONIC_USEC=, then READY=1.
        let beforeHUP = Self.monotonicMicroseconds()
        process.send(signal: SIGHUP)
        let reloading = listener.receive(until: { $0.notifyAssignments["RELOADING"] == "1" }, within: 5)
        let reloadMessage = try #require(reloading.match, "no RELOADING=1 after SIGHUP; saw \(reloading.seen.map(\.text))")
        print("notify: on SIGHUP:", reloadMessage.debugDescription)
        let usec = try #require(reloadMessage.notifyAssignments["MONOTONIC_USEC"].flatMap { UInt64($0) }, "RELOADING=1 without MONOTONIC_USEC=")
        #expect(usec >= beforeHUP && usec <= Self.monotonicMicroseconds())
        let reready = listener.receive(until: { $0.notifyAssignments["READY"] == "1" }, within: 5)
        #expect(reready.match != nil, "no READY=1 after RELOADING=1")
        #expect(!reready.seen.contains { $0.text.notifyAssignments["STOPPING"] != nil })

        // 5. SIGTERM: STOPPING=1, then a clean exit.
        process.send(signal: SIGTERM)
        let stopping = listener.receive(until: { $0.notifyAssignments["STOPPING"] == "1" }, within: 5)
        #expect(stopping.match != nil, "no STOPPING=1 after SIGTERM; saw \(stopping.seen.map(\.text))")
        let ended = Self.waitForExit(process, seconds: 5)
        #expect(ended == .exited(0), "daemon did not exit cleanly within 5 s of SIGTERM: \(ended.map { "\($0)" } ?? "still running")")
    }

    /// A reload still under way when SIGTERM comes, failing after STOPPING=1 was sent: the daemon
    /// keeps stopping and sends no READY=1 (systemd would take it for a finished reload of a
    /// service it is stopping). The reload is held up in the middle by its token file, replaced
    /// after start-up by a FIFO the test holds open for writing: the daemon's read of it waits
    /// until the test closes its end, which makes the token "empty" and the reload fail. A client
    /// that reads nothing holds the stopping daemon's loop open (it waits up to half a second for
    /// its output to drain) while the failure comes back to the loop.
    @Test func reloadFailingAfterStoppingSendsNoReady() throws {
        let directory = try SystemdE2E.temporaryDirectory("reload-stop-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try SystemdNotifyListener()
        let port = try SystemdE2E.freePort()
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        // One page of 512 KiB, so a few TEXT replies nobody reads fill every buffer on the way.
        let document = directory.appendingPathComponent("big.txt")
        try String(repeating: String(repeating: "x", count: 1023) + "\n", count: 512).write(to: document, atomically: true, encoding: .utf8)
        let token = directory.appendingPathComponent("token")
        try "t0\n".write(to: token, atomically: true, encoding: .utf8)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let logURL = directory.appendingPathComponent("stderr.log")
        let logFD = open(logURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(logFD >= 0)
        let process = try ChildProcess(
            executable: binary,
            arguments: ["--listen", "127.0.0.1:\(port)", "--state-dir", state.path, "--token-file", token.path, document.path],
            outputFD: logFD, environment: ["NOTIFY_SOCKET": listener.path],
            unsetting: ["WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM"])
        close(logFD)
        defer { process.killAndReap() }
        let startup = listener.receive(until: { $0.notifyAssignments["READY"] == "1" }, within: 15)
        try #require(startup.match != nil, "no READY=1 at start-up; saw \(startup.seen.map(\.text))")

        // The client that holds the loop open: asks for the big page 64 times and reads nothing.
        let stalled = try #require(SystemdE2E.connect(port: port), "daemon did not listen")
        defer { close(stalled) }
        var small: Int32 = 4096
        setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let requests = String(repeating: "TEXT\n", count: 64)
        #expect(requests.withCString { send(stalled, $0, strlen($0), 0) } == requests.utf8.count)
        usleep(300_000)

        // The token file becomes a FIFO with a writer (the test; its own reader only lets that
        // open succeed): the reload opens it and waits in the read.
        try FileManager.default.removeItem(at: token)
        try #require(mkfifo(token.path, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        let ownReader = open(token.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(ownReader >= 0, "open the FIFO: \(String(cString: strerror(errno)))")
        var writer = open(token.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        defer { close(ownReader); if writer >= 0 { close(writer) } }
        try #require(writer >= 0, "open the FIFO for writing: \(String(cString: strerror(errno)))")
        process.send(signal: SIGHUP)
        let reloading = listener.receive(until: { $0.notifyAssignments["RELOADING"] == "1" }, within: 5)
        try #require(reloading.match != nil, "no RELOADING=1 after SIGHUP; saw \(reloading.seen.map(\.text))")
        // The reload is reading the token once the daemon holds the FIFO open.
        var reading = false
        for _ in 0..<500 where !reading {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.pid)/fd")) ?? []
            reading = fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.pid)/fd/\($0)")) == token.path }
            if !reading { usleep(10_000) }
        }
        try #require(reading, "the reload did not open the token FIFO within 5 s")

        process.send(signal: SIGTERM)
        let stopping = listener.receive(until: { $0.notifyAssignments["STOPPING"] == "1" }, within: 5)
        try #require(stopping.match != nil, "no STOPPING=1 after SIGTERM; saw \(stopping.seen.map(\.text))")
        #expect(!stopping.seen.contains { $0.text.notifyAssignments["READY"] != nil }, "READY=1 before the reload was done")
        // Now the reload fails: the last writer closes, and the token read finds nothing.
        close(writer)
        writer = -1

        var after: [String] = []
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline {
            if let message = listener.receive(within: 0.05) { after.append(message) }
        }
        while let message = listener.receive(within: 0) { after.append(message) }
        let ended = Self.waitForExit(process, seconds: 5)
        let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        #expect(ended == .exited(0), "log:\n\(log.suffix(3000))")
        print("notify: after STOPPING=1:", after)
        #expect(!after.contains { $0.notifyAssignments["READY"] == "1" }, "READY=1 after STOPPING=1: \(after)")
        if !log.contains("keeping the running configuration") {
            // The loop stopped before the failure came back to it: nothing was tested this time.
            print("note: the daemon stopped before its reload failed; log:\n\(log.suffix(2000))")
        }
    }

    @Test func silentAndHealthyWithoutNotifySocket() throws {
        let directory = try SystemdE2E.temporaryDirectory("nonotify-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try SystemdE2E.freePort()
        let process = try Self.launch(port: port, environment: ["WATCHDOG_USEC": "100000"], in: directory)
        defer { process.killAndReap() }
        let client = try #require(SystemdE2E.connect(port: port), "daemon did not listen")
        defer { close(client) }
        #expect(SystemdE2E.readLine(client)?.hasPrefix("HELLO pagesync/1 ") == true)
        process.send(signal: SIGTERM)
        #expect(Self.waitForExit(process, seconds: 5) == .exited(0))
    }

    @Test func socketActivationGreetsClients() throws {
        guard let activate = SystemdE2E.which("systemd-socket-activate") else {
            cannotRunHere(skipped: "systemd-socket-activate is not installed", underCI: "systemd-socket-activate is not installed (scripts/test installs systemd)")
            return
        }
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        let directory = try SystemdE2E.temporaryDirectory("activate-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = try SystemdE2E.writeDocument(in: directory)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let activatedPort = try SystemdE2E.freePort()
        // --listen names a different port: a greeting on activatedPort proves the passed fd is used.
        let configuredPort = try SystemdE2E.freePort()
        let process = try SystemdE2E.socketActivate(activate, ["-l", "127.0.0.1:\(activatedPort)", "--fdname=pagesync",
                             binary, "--listen", "127.0.0.1:\(configuredPort)", "--state-dir", state.path, document.path])
        // systemd-socket-activate execs the daemon in place on the first connection: same pid.
        defer { process.killAndReap() }

        let first = try #require(SystemdE2E.connect(port: activatedPort), "systemd-socket-activate did not listen")
        defer { close(first) }
        let greeting = SystemdE2E.readLine(first)
        print("socket activation: first client got:", greeting ?? "<nothing>")
        #expect(greeting?.hasPrefix("HELLO pagesync/1 ") == true)
        let second = try #require(SystemdE2E.connect(port: activatedPort))
        defer { close(second) }
        #expect(SystemdE2E.readLine(second)?.hasPrefix("HELLO pagesync/1 ") == true)
        #expect(SystemdE2E.connect(port: configuredPort, retryFor: 0) == nil,
                "the activated daemon also bound its configured address")

        process.send(signal: SIGTERM)
        #expect(Self.waitForExit(process, seconds: 5) != nil)
    }

    /// pagesyncd-tls.socket's hand-over: two sockets, named `pagesync` and `pagesync-tls` as the
    /// shipped units name them; the daemon speaks plaintext on the first and TLS on the second,
    /// and binds neither of its configured addresses.
    @Test func socketActivationServesTLSOnThePagesyncTLSSocket() throws {
        guard let activate = SystemdE2E.which("systemd-socket-activate") else {
            cannotRunHere(skipped: "systemd-socket-activate is not installed", underCI: "systemd-socket-activate is not installed (scripts/test installs systemd)")
            return
        }
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        let openssl = try #require(SystemdE2E.which("openssl"), "openssl is not installed")
        let certs = try TestCertificates()
        defer { certs.remove() }
        let directory = try SystemdE2E.temporaryDirectory("activate-tls-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = try SystemdE2E.writeDocument(in: directory)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let plainPort = try SystemdE2E.freePort()
        let tlsPort = try SystemdE2E.freePort()
        let configuredPlain = try SystemdE2E.freePort()
        let configuredTLS = try SystemdE2E.freePort()
        let process = try SystemdE2E.socketActivate(activate, ["-l", "127.0.0.1:\(plainPort)", "-l", "127.0.0.1:\(tlsPort)", "--fdname=pagesync:pagesync-tls",
                             binary, "--listen", "127.0.0.1:\(configuredPlain)", "--tls-listen", "127.0.0.1:\(configuredTLS)",
                             "--tls-cert", certs.certificateFile, "--tls-key", certs.keyFile,
                             "--state-dir", state.path, document.path])
        defer { process.killAndReap() }

        // The first connection (plaintext) starts the daemon with both sockets.
        let plain = try #require(SystemdE2E.connect(port: plainPort), "systemd-socket-activate did not listen")
        defer { close(plain) }
        #expect(SystemdE2E.readLine(plain)?.hasPrefix("HELLO pagesync/1 ") == true)

        // A TLS client on the pagesync-tls socket, verifying the certificate: openssl s_client
        // speaks TLS, the test speaks plaintext to it through a socket pair.
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let devNull = try SystemdE2E.openDevNull()
        let client = try ChildProcess(
            executable: openssl,
            arguments: ["s_client", "-quiet", "-verify_return_error", "-CAfile", certs.caFile, "-connect", "127.0.0.1:\(tlsPort)"],
            outputFD: devNull, stdioFD: pair[1])
        close(devNull)
        close(pair[1])
        defer { client.killAndReap() }
        let greeting = SystemdE2E.readLine(pair[0])
        print("socket activation, pagesync-tls socket: TLS client got:", greeting ?? "<nothing>")
        #expect(greeting?.hasPrefix("HELLO pagesync/1 ") == true)
        _ = "PING over-tls\n".withCString { send(pair[0], $0, strlen($0), 0) }
        #expect(SystemdE2E.readLine(pair[0]) == "OK PONG over-tls")

        // Plaintext on the TLS socket gets no greeting.
        let wrong = try #require(SystemdE2E.connect(port: tlsPort, retryFor: 0))
        defer { close(wrong) }
        _ = "PING\n".withCString { send(wrong, $0, strlen($0), 0) }
        let answer = SystemdE2E.readLine(wrong) ?? ""  // nil at the close; at most an alert before it
        #expect(!answer.contains("HELLO") && !answer.contains("PONG"), "the pagesync-tls socket answered plaintext: \(answer)")
        #expect(SystemdE2E.connect(port: configuredPlain, retryFor: 0) == nil, "the activated daemon also bound --listen")
        #expect(SystemdE2E.connect(port: configuredTLS, retryFor: 0) == nil, "the activated daemon also bound --tls-listen")

        process.send(signal: SIGTERM)
        #expect(Self.waitForExit(process, seconds: 5) != nil)
    }

    /// With JOURNAL_STREAM naming its stderr, every log line carries a `<N>` priority prefix;
    /// without it, none does.
    @Test(arguments: [true, false])
    func journalPriorityPrefixes(journal: Bool) throws {
        let directory = try SystemdE2E.temporaryDirectory("journal-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logURL = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        var info = stat()
        try #require(fstat(log.fileDescriptor, &info) == 0)
        let port = try SystemdE2E.freePort()
        let environment = journal ? ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"] : [:]
        let process = try Self.launch(port: port, environment: environment, in: directory, standardError: log.fileDescriptor)
        defer { process.killAndReap() }
        let client = try #require(SystemdE2E.connect(port: port), "daemon did not listen")
        _ = SystemdE2E.readLine(client)
        close(client)
        process.send(signal: SIGTERM)
        #expect(Self.waitForExit(process, seconds: 5) != nil)
        try log.close()
        let lines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n")
        print("stderr with\(journal ? "" : "out") JOURNAL_STREAM:", lines.prefix(3))
        #expect(!lines.isEmpty, "the daemon logged nothing")
        func prefixed(_ line: Substring) -> Bool {
            let bytes = Array(line.utf8)
            return bytes.count >= 3 && bytes[0] == UInt8(ascii: "<") && (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[1])
                && bytes[2] == UInt8(ascii: ">")
        }
        if journal {
            #expect(lines.allSatisfy(prefixed), "lines without <N>: \(lines.filter { !prefixed($0) })")
        } else {
            #expect(!lines.contains(where: prefixed), "<N> prefixes outside the journal")
        }
    }
}
