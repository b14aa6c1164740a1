import ArgumentParser
import PageSyncCore
#if canImport(Glibc)
import Glibc
#endif
import UV

/// `pagesync-bench journal`: how long pagesyncd takes to recover a long journal, and how much
/// disk its state dir uses after many changes.
struct JournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Time pagesyncd recovering a journal of many records; state-dir size after many changes.",
        discussion: """
            Recovery: serves --rooms small two-page documents once on an empty state dir (timing \
            that start too), stops it, then writes a journal of --records room records over \
            those rooms (with the epochs and document ids the daemon saved, between an "opened" \
            and a "closed" record, so it is a clean stop) with PageSyncCore's JournalCodec, and \
            times --starts starts from exec to "listening on" on the daemon's stderr. The \
            journal was just written, so it is in the page cache (warm). Rows: \
            start_empty_ms, recovery_ms (median) and recovery_max_ms with n = records, the \
            daemon's CPU time until then (start_empty_cpu_ms, recovery_cpu_ms), \
            recovery_journal_mib, recovery_version_ok (1 when room <prefix>0 came back at the \
            version of its last record).

            Disk use: starts the daemon on a fresh state dir with --wrap and sends --changes \
            NEXT commands on one connection, pipelined in windows of --window, then sums the \
            sizes of the state dir's files right after the last reply, 2 s later, and after \
            a clean stop. Rows: diskuse_bytes, diskuse_settled_bytes, diskuse_stopped_bytes \
            and pipelined_cps with n = changes.
            """)

    @Option(help: "The pagesyncd binary.") var daemon: String
    @Option(help: "Scratch directory for documents and state dirs (on the disk to measure).") var dir: String
    @Option(help: "Room records in the recovery journal.") var records = 1_000_000
    @Option(help: "Changes for the disk-use measurement (0 skips it).") var changes = 1_000_000
    @Option(help: "Rooms (documents) served.") var rooms = 200
    @Option(help: "Timed starts on the long journal.") var starts = 3
    @Option(help: "Commands per pipelined window.") var window = 1000
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?
    @Option(name: .customLong("daemon-arg"), help: "Extra argument for the daemon (repeatable).") var daemonArgs: [String] = []

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        mkdir(dir, 0o755)
        let docs = try writeDocuments()
        if records > 0 { try recovery(sink, docs: docs) }
        if changes > 0 { try diskUse(sink, docs: docs) }
    }

    /// Writes `rooms` two-page documents `r<i>.txt`; returns their paths.
    private func writeDocuments() throws -> [String] {
        let docDir = "\(dir)/docs"
        mkdir(docDir, 0o755)
        var paths: [String] = []
        for i in 0..<rooms {
            let path = "\(docDir)/r\(i).txt"
            try writeFile(path, Array("room \(i), page one\n\u{0C}\nroom \(i), page two\n".utf8))
            paths.append(path)
        }
        return paths
    }

    private func recovery(_ sink: ResultSink, docs: [String]) throws {
        let stateDir = "\(dir)/recovery-state"
        mkdir(stateDir, 0o755)
        let journal = "\(stateDir)/journal"
        unlink(journal)

        // An empty start: the daemon journals every new room with a fresh epoch.
        let empty = try startAndStop(docs, stateDir: stateDir)
        sink.add("start_empty_ms", n: rooms, empty.milliseconds)
        sink.add("start_empty_cpu_ms", n: rooms, empty.cpuMilliseconds)
        guard let existing = readFile(journal) else { log("no journal after the first start"); throw ExitCode(1) }
        let saved = JournalRecovery(scanning: existing)
        guard saved.rooms.count == rooms, let bootID = saved.lastBootID else {
            log("the first start saved \(saved.rooms.count) of \(rooms) rooms; boot id \(saved.lastBootID ?? "none")")
            throw ExitCode(1)
        }

        // The long journal: every room in turn, versions growing, as a daemon writes them.
        let names = (0..<rooms).map { "r\($0)" }
        let base = names.map { saved.rooms[$0]! }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records * 64 + 1024)
        JournalCodec.append(.opened(bootID: bootID), to: &bytes)
        for k in 0..<records {
            let r = base[k % rooms]
            let step = UInt64(k / rooms + 1)
            let page = PageNumber(step % 2 == 1 ? 2 : 1)!
            JournalCodec.append(.room(SavedRoom(room: r.room, page: page, version: r.version + step,
                                                by: "bench-client-\(k % rooms)", doc: r.doc, epoch: r.epoch)), to: &bytes)
        }
        JournalCodec.append(.closed, to: &bytes)
        // Room r0's last record is the last k with k % rooms == 0.
        let lastK0 = ((records - 1) / rooms) * rooms
        let expectedVersion = base[0].version + UInt64(lastK0 / rooms + 1)
        sink.add("recovery_journal_mib", n: records, Double(bytes.count) / 1_048_576)
        log("journal of \(records) room records: \(bytes.count) bytes")

        var times: [Double] = []
        var cpuTimes: [Double] = []
        var versionOK = true
        for _ in 0..<max(1, starts) {
            try writeFile(journal, bytes)
            let start = try startAndStop(docs, stateDir: stateDir) { port in
                let version = helloVersion(port: port)
                if version != expectedVersion {
                    log("room r0 came back at version \(version.map(String.init) ?? "?"), expected \(expectedVersion)")
                    versionOK = false
                }
            }
            times.append(start.milliseconds)
            cpuTimes.append(start.cpuMilliseconds)
            log("recovered \(records) records: listening after \(fmt(start.milliseconds)) ms, \(fmt(start.cpuMilliseconds)) ms of CPU")
        }
        sink.add("recovery_ms", n: records, median(times) ?? 0)
        sink.add("recovery_max_ms", n: records, times.max() ?? 0)
        sink.add("recovery_cpu_ms", n: records, median(cpuTimes) ?? 0)
        sink.add("recovery_version_ok", n: records, versionOK ? 1 : 0)
    }

    private func diskUse(_ sink: ResultSink, docs: [String]) throws {
        let stateDir = "\(dir)/diskuse-state"
        mkdir(stateDir, 0o755)
        guard let child = Spawn.run(daemon, docs + ["--listen", "127.0.0.1:0", "--state-dir", stateDir, "--wrap"] + daemonArgs,
                                    stderrPipe: true, stdoutToNull: true), let errFD = child.stderr else {
            log("cannot start \(daemon)"); throw ExitCode(1)
        }
        var stopped = false
        defer { if !stopped { kill(child.pid, SIGTERM); Spawn.wait(child.pid) } }
        guard let port = DaemonOutput.waitForListening(errFD) else { log("\(daemon) did not report \"listening on\""); throw ExitCode(1) }
        DaemonOutput.drainInBackground(errFD)
        guard let fd = BlockingSocket.connect(port: port) else { log("cannot connect to port \(port)"); throw ExitCode(1) }
        defer { close(fd) }
        var reader = BlockingLineReader(fd: fd)
        guard reader.withLine({ $0.kind == .hello && $0.yesNo("wrap") == true }) == true else {
            log("no HELLO of a wrapping room"); throw ExitCode(1)
        }
        let started = MonotonicClock.nanoseconds()
        var done = 0, errors = 0
        let command = CommandEncoder.bytes(.navigate(.next, ifVersion: nil))
        var batch: [UInt8] = []
        while done < changes {
            let n = min(window, changes - done)
            batch.removeAll(keepingCapacity: true)
            for _ in 0..<n { batch += command }
            guard BlockingSocket.sendAll(fd, batch) else { log("send failed after \(done) changes"); throw ExitCode(1) }
            var replies = 0
            while replies < n {
                // The replies, and PAGE events of the client's own room between them.
                let read = reader.withLine { line in
                    (kind: line.kind, error: line.kind == .error ? String(decoding: line.bytes, as: UTF8.self) : nil)
                }
                guard let read else { log("connection closed after \(done + replies) changes"); throw ExitCode(1) }
                if read.kind.isReply { replies += 1 }
                if let error = read.error {
                    errors += 1
                    if errors <= 3 { log("got: \(error)") }
                }
            }
            done += n
        }
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        let running = directoryBytes(stateDir)
        sleepMilliseconds(2000)
        let settled = directoryBytes(stateDir)
        kill(child.pid, SIGTERM); Spawn.wait(child.pid); stopped = true
        let final = directoryBytes(stateDir)
        sink.add("pipelined_cps", n: changes, Double(changes) / seconds)
        sink.add("diskuse_bytes", n: changes, Double(running))
        sink.add("diskuse_settled_bytes", n: changes, Double(settled))
        sink.add("diskuse_stopped_bytes", n: changes, Double(final))
        if errors > 0 { sink.add("diskuse_errors", n: changes, Double(errors)) }
        log("\(changes) pipelined changes in \(fmt(seconds, 2)) s (\(errors) errors); state dir \(running) B, after 2 s \(settled) B, stopped \(final) B")
    }

    /// Starts the daemon on `docs`, times exec to "listening on" (wall clock, and the CPU time
    /// the daemon used until then), runs `probe` with its port, and stops it with SIGTERM.
    private func startAndStop(_ docs: [String], stateDir: String, probe: (Int) -> Void = { _ in }) throws -> (milliseconds: Double, cpuMilliseconds: Double, port: Int) {
        let started = MonotonicClock.nanoseconds()
        guard let child = Spawn.run(daemon, docs + ["--listen", "127.0.0.1:0", "--state-dir", stateDir, "--wrap"] + daemonArgs,
                                    stderrPipe: true, stdoutToNull: true), let errFD = child.stderr else {
            log("cannot start \(daemon)"); throw ExitCode(1)
        }
        defer { kill(child.pid, SIGTERM); Spawn.wait(child.pid) }
        guard let port = DaemonOutput.waitForListening(errFD) else { log("\(daemon) did not report \"listening on\""); throw ExitCode(1) }
        let milliseconds = Double(MonotonicClock.nanoseconds() - started) / 1e6
        let cpu = ProcessProbe.cpuMilliseconds(pid: child.pid) ?? 0
        DaemonOutput.drainInBackground(errFD)
        probe(port)
        return (milliseconds, cpu, port)
    }

    /// The version in the HELLO of a new connection (the first room's).
    private func helloVersion(port: Int) -> UInt64? {
        guard let fd = BlockingSocket.connect(port: port) else { return nil }
        defer { close(fd) }
        var reader = BlockingLineReader(fd: fd)
        return reader.withLine { $0.kind == .hello ? $0.uint64("version") : nil } ?? nil
    }

    private func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { log("cannot create \(path)"); throw ExitCode(1) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { log("short write to \(path)"); throw ExitCode(1) }
            offset += n
        }
    }

    private func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    /// The sum of the sizes of the regular files directly in `path`.
    private func directoryBytes(_ path: String) -> Int {
        var total = 0
        for name in DirectoryEntries.names(in: path) ?? [] {
            var st = stat()
            if stat("\(path)/\(name)", &st) == 0 && (Int(st.st_mode) & Int(S_IFMT)) == Int(S_IFREG) { total += Int(st.st_size) }
        }
        return total
    }
}
