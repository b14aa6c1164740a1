#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization
import Testing
import PageSyncCore
import PageSyncServer
import UV

/// A real AF_UNIX datagram socket standing in for systemd's notify socket.
final class NotifyReceiver {
    let fd: Int32
    /// What to put in NOTIFY_SOCKET.
    let notifySocket: String
    private let directory: String?

    /// Binds a filesystem socket in a fresh temp dir, or an abstract one when `abstract`.
    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)   // a safety net, not an assertion
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let name: String
        if abstract {
            directory = nil
            name = "@pagesync-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        } else {
            var template = Array("/tmp/pagesync-notify-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            try #require(made != nil)
            directory = String(cString: made!)
            name = directory! + "/notify"
        }
        notifySocket = name
        let (address, length) = try #require(SystemdNotifier.socketAddress(for: name))
        let bound = address.withUnsafeBytes {
            bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
        try #require(bound == 0, "bind \(name): errno \(errno)")
    }

    /// The next datagram as text, or nil after the 5 s safety timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    deinit {
        close(fd)
        if let directory {
            unlink(directory + "/notify")
            rmdir(directory)
        }
    }
}

@Suite("SystemdNotifier over a real AF_UNIX datagram socket")
struct SystemdNotifierTests {
    @Test func silentWithoutNotifySocket() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(notifier.socketName == nil)
        #expect(!notifier.ready(status: "x"))
        #expect(!notifier.status("x"))
        #expect(!notifier.watchdog())
        #expect(!notifier.reloading())
        #expect(!notifier.stopping())
    }

    @Test(arguments: ["", "relative/path", "@", "vsock:2:1234", "/" + String(repeating: "a", count: 120)])
    func unusableNotifySocketDisables(_ value: String) {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value])
        #expect(!notifier.isEnabled)
        #expect(!notifier.watchdog())
    }

    @Test func sendsEveryMessageInOrderToAPathSocket() throws {
        let receiver = try NotifyReceiver()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(notifier.isEnabled)
        #expect(notifier.socketName == receiver.notifySocket)

        #expect(notifier.ready(status: "1 room, 0 clients"))
        #expect(receiver.receive() == "READY=1\nSTATUS=1 room, 0 clients")
        #expect(notifier.status("2 rooms, 3 clients"))
        #expect(receiver.receive() == "STATUS=2 rooms, 3 clients")
        #expect(notifier.watchdog())
        #expect(receiver.receive() == "WATCHDOG=1")

        let before = MonotonicClock.microseconds()
        #expect(notifier.reloading())
        let after = MonotonicClock.microseconds()
        let reloading = try #require(receiver.receive())
        let lines = reloading.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first == "RELOADING=1")
        let usec = try #require(lines.last.flatMap { $0.hasPrefix("MONOTONIC_USEC=") ? UInt64($0.dropFirst(15)) : nil })
        #expect(before <= usec && usec <= after)

        #expect(notifier.ready())
        #expect(receiver.receive() == "READY=1")
        #expect(notifier.stopping())
        #expect(receiver.receive() == "STOPPING=1")
    }

    @Test func abstractNamespaceSocket() throws {
        let receiver = try NotifyReceiver(abstract: true)
        #expect(receiver.notifySocket.hasPrefix("@"))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(notifier.ready())
        #expect(receiver.receive() == "READY=1")
        #expect(notifier.watchdog())
        #expect(receiver.receive() == "WATCHDOG=1")
    }

    @Test func nobodyListeningIsReportedNotFatal() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent-dir-\(getpid())/notify"])
        #expect(notifier.isEnabled)
        #expect(!notifier.ready())
    }

    @Test func addressForms() throws {
        let (path, pathLength) = try #require(SystemdNotifier.socketAddress(for: "/run/x"))
        let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        #expect(Int(pathLength) == offset + 7)  // "/run/x" + NUL
        #expect(Array(path[offset..<offset + 7]) == Array("/run/x".utf8) + [0])

        let (abstract, abstractLength) = try #require(SystemdNotifier.socketAddress(for: "@name"))
        #expect(Int(abstractLength) == offset + 5)  // NUL + "name", no terminator
        #expect(Array(abstract[offset..<offset + 5]) == [0] + Array("name".utf8))

        let longest = "/" + String(repeating: "a", count: 106)   // 107 bytes + NUL = 108
        #expect(SystemdNotifier.socketAddress(for: longest) != nil)
        #expect(SystemdNotifier.socketAddress(for: longest + "a") == nil)
        #expect(SystemdNotifier.socketAddress(for: "@" + String(repeating: "a", count: 107)) != nil)
    }
}

@Suite("SocketActivation", .serialized)
struct SystemdSocketActivationTests {
    @Test func notActivated() throws {
        let result = SocketActivation.take(environment: [:], pid: 10, unsetEnvironment: false)
        let fds = try result.get()
        #expect(fds.isEmpty)
    }

    @Test func variablesForAnotherProcess() throws {
        let result = SocketActivation.take(environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1"], pid: 10, unsetEnvironment: false)
        #expect(try result.get().isEmpty)
    }

    @Test func malformedVariablesAreExplained() {
        let result = SocketActivation.take(environment: ["LISTEN_PID": "10", "LISTEN_FDS": "zero"], pid: 10, unsetEnvironment: false)
        guard case .failure(let failure) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure == .invalidEnvironment(.invalidCount("zero")))
        #expect(failure.description == "socket activation: LISTEN_FDS=zero is not a positive descriptor count")
    }

    @Test func closedDescriptorIsReported() throws {
        // Pretend to pass every descriptor the open-file limit allows: 3 up to the limit - 1. The
        // kernel hands out the lowest free number, so the last one is open only if every one is,
        // and since every descriptor is checked before any is changed, none of ours is touched.
        // (A fixed 1,000 was not enough: the parallel suite holds over 1,000 sockets at times,
        // and then every one was taken as passed and made close-on-exec.)
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let count = Int(clamping: min(limit.rlim_cur, 1 << 20)) - 3
        let result = SocketActivation.take(environment: ["LISTEN_PID": "10", "LISTEN_FDS": "\(count)"], pid: 10, unsetEnvironment: false)
        guard case .failure(.badDescriptor(_, let code)) = result else {
            Issue.record("expected a bad descriptor, got \(result)")
            return
        }
        #expect(code == EBADF)
    }

    // Unsetting LISTEN_* is not tested here: setenv/unsetenv race with other tests reading the
    // environment in this process. `take` unsets in a `defer`, whatever the outcome.

    @Test func recognisesListeningTCPSockets() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(!SocketActivation.isListeningStreamSocket(fd))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        try #require(listen(fd, 1) == 0)
        #expect(SocketActivation.isListeningStreamSocket(fd))
        #expect(SocketActivation.addressFamily(of: fd) == AF_INET)

        var pipeFDs: [Int32] = [0, 0]
        try #require(pipe(&pipeFDs) == 0)
        defer { close(pipeFDs[0]); close(pipeFDs[1]) }
        #expect(!SocketActivation.isListeningStreamSocket(pipeFDs[0]))
        #expect(SocketActivation.addressFamily(of: pipeFDs[0]) == nil)
    }
}

/// Collects output lines for inspection.
final class LineSink: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    var output: JournalAwareLogHandler.Output { { line in self.storage.withLock { $0.append(line) } } }
}

@Suite("JournalAwareLogHandler")
struct SystemdLogHandlerTests {
    @Test(arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func priorities(_ level: Logger.Level, _ expected: Int) {
        #expect(JournalPriority(level).rawValue == expected)
    }

    @Test func journalLinesCarryPriorityPrefixes() {
        let sink = LineSink()
        var logger = Logger(label: "pagesyncd") { JournalAwareLogHandler(label: $0, journalMode: true, output: sink.output) }
        logger.logLevel = .trace
        logger.error("cannot bind", metadata: ["address": "127.0.0.1:7777"])
        logger.info("listening")
        logger.debug("client connected")
        logger.critical("boom")
        #expect(sink.lines == [
            "<3>pagesyncd: cannot bind address=127.0.0.1:7777\n",
            "<6>pagesyncd: listening\n",
            "<7>pagesyncd: client connected\n",
            "<2>pagesyncd: boom\n",
        ])
    }

    @Test func everyLineOfAMultiLineMessageIsPrefixed() {
        let sink = LineSink()
        let logger = Logger(label: "d") { JournalAwareLogHandler(label: $0, journalMode: true, output: sink.output) }
        logger.warning("one\ntwo")
        #expect(sink.lines == ["<4>d: one\n<4>two\n"])
    }

    @Test func humanLinesHaveTimestampLevelLabelMessageMetadata() throws {
        let sink = LineSink()
        let logger = Logger(label: "pagesyncd") { JournalAwareLogHandler(label: $0, journalMode: false, output: sink.output) }
        logger.notice("reloaded", metadata: ["rooms": "2", "by": "SIGHUP"])
        let line = try #require(sink.lines.first)
        #expect(sink.lines.count == 1)
        #expect(!line.hasPrefix("<"))
        // 2026-01-31T12:00:00.123Z notice pagesyncd: reloaded by=SIGHUP rooms=2
        let parts = line.split(separator: " ", maxSplits: 2)
        try #require(parts.count == 3)
        let stamp = Array(parts[0].utf8)
        #expect(stamp.count == 24)
        #expect(stamp[4] == UInt8(ascii: "-") && stamp[10] == UInt8(ascii: "T") && stamp[19] == UInt8(ascii: ".") && stamp[23] == UInt8(ascii: "Z"))
        #expect(parts[1] == "notice")
        #expect(parts[2] == "pagesyncd: reloaded by=SIGHUP rooms=2\n")
    }

    @Test func metadataMergesHandlerProviderAndEventInThatOrder() {
        let sink = LineSink()
        let provider = Logger.MetadataProvider { ["room": "provided", "task": "t1"] }
        var logger = Logger(label: "x") {
            JournalAwareLogHandler(label: $0, journalMode: true, metadataProvider: provider, output: sink.output)
        }
        logger[metadataKey: "room"] = "handler"
        logger[metadataKey: "conn"] = "7"
        #expect(logger[metadataKey: "conn"] == "7")
        logger.info("m", metadata: ["task": "event"])
        #expect(sink.lines == ["<6>x: m conn=7 room=provided task=event\n"])
    }

    @Test func awkwardValuesAreQuoted() {
        #expect(JournalAwareLogHandler.formatMetadata(["a": "two words", "b": "", "c": "x=y", "d": "say \"hi\"", "e": "plain"])
                == #"a="two words" b="" c="x=y" d="say \"hi\"" e=plain"#)
    }

    @Test func journalDetectionComparesStderrDeviceAndInode() {
        #expect(!JournalAwareLogHandler.standardErrorIsJournal(environment: [:]))
        #expect(!JournalAwareLogHandler.standardErrorIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return }
        let mine = "\(info.st_dev):\(info.st_ino)"
        #expect(JournalAwareLogHandler.standardErrorIsJournal(environment: ["JOURNAL_STREAM": mine]))
        #expect(!JournalAwareLogHandler.standardErrorIsJournal(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino &+ 1)"]))
    }
}

@Suite("SystemdLifecycleObserver")
struct SystemdLifecycleObserverTests {
    @Test func silentWithoutNotifySocket() {
        let observer = SystemdLifecycleObserver(environment: ["WATCHDOG_USEC": "1000000"], pid: 5)
        #expect(!observer.notifier.isEnabled)
        #expect(observer.watchdogInterval == nil)
        observer.ready(status: "x")   // no-op, no crash
    }

    @Test func forwardsToTheNotifySocketAndPingsAtHalfTheTimeout() throws {
        let receiver = try NotifyReceiver()
        let observer = SystemdLifecycleObserver(
            environment: ["NOTIFY_SOCKET": receiver.notifySocket, "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "5"], pid: 5)
        #expect(observer.watchdogInterval == .milliseconds(1500))
        observer.ready(status: "0 client(s) in 1 room(s)")
        #expect(receiver.receive() == "READY=1\nSTATUS=0 client(s) in 1 room(s)")
        observer.status("1 client(s) in 1 room(s)")
        #expect(receiver.receive() == "STATUS=1 client(s) in 1 room(s)")
        observer.watchdog()
        #expect(receiver.receive() == "WATCHDOG=1")
        observer.reloading()
        #expect(receiver.receive()?.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") == true)
        observer.stopping()
        #expect(receiver.receive() == "STOPPING=1")
    }

    @Test func noWatchdogForAnotherProcess() throws {
        let receiver = try NotifyReceiver()
        let observer = SystemdLifecycleObserver(
            environment: ["NOTIFY_SOCKET": receiver.notifySocket, "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "6"], pid: 5)
        #expect(observer.watchdogInterval == nil)
    }
}
