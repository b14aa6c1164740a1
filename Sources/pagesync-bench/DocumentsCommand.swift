import ArgumentParser
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench documents`: how long pagesyncd takes to open and index big documents, its
/// peak RSS while doing so, and `TEXT` latency for a page in the middle.
struct DocumentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "Time pagesyncd opening generated 1 MiB / 100 MiB / 1 GiB documents; TEXT latency.",
        discussion: """
            Generates documents (lines of about 64 bytes, a form feed every 60 lines) in --dir, \
            starts the daemon on each with --listen 127.0.0.1:0, and times until "listening on" \
            appears on its stderr. Peak RSS is VmHWM from /proc/<pid>/status at that moment.
            """)

    @Option(help: "The pagesyncd binary.") var daemon: String
    @Option(help: "Directory for the generated documents and state.") var dir: String
    @Option(help: "Document sizes in MiB, comma-separated.") var sizes = "1,100,1024"
    @Option(help: "TEXT requests per document.") var texts = 100
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?
    @Option(name: .customLong("daemon-arg"), help: "Extra argument for the daemon (repeatable).") var daemonArgs: [String] = []

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        for mib in sizes.split(separator: ",").compactMap({ Int($0) }) {
            let path = "\(dir)/doc-\(mib)MiB.txt"
            try generate(path: path, bytes: mib << 20)
            let stateDir = "\(dir)/state-\(mib)"
            mkdir(stateDir, 0o755)
            let started = MonotonicClock.nanoseconds()
            guard let child = Spawn.run(daemon, [path, "--listen", "127.0.0.1:0", "--state-dir", stateDir] + daemonArgs,
                                        stderrPipe: true, stdoutToNull: true), let errFD = child.stderr else {
                log("cannot start \(daemon)"); throw ExitCode(1)
            }
            defer { kill(child.pid, SIGTERM); Spawn.wait(child.pid) }
            guard let port = DaemonOutput.waitForListening(errFD) else {
                log("\(daemon) did not report \"listening on\" for \(path)"); throw ExitCode(1)
            }
            let milliseconds = Double(MonotonicClock.nanoseconds() - started) / 1e6
            let hwm = ProcessProbe.statusKiB(pid: child.pid, field: "VmHWM") ?? 0
            DaemonOutput.drainInBackground(errFD)
            sink.add("doc_open_ms", n: mib, milliseconds)
            sink.add("doc_hwm_mib", n: mib, Double(hwm) / 1024)
            let samples = textLatencies(port: port, count: texts)
            if let p = Percentiles(samples) {
                sink.add("doc_text_p50_us", n: mib, p.p50)
                sink.add("doc_text_p99_us", n: mib, p.p99)
            }
            log("\(mib) MiB: listening after \(fmt(milliseconds)) ms, VmHWM \(fmt(Double(hwm) / 1024)) MiB, TEXT p50 \(fmt(median(samples) ?? 0)) us")
        }
    }

    /// Writes `bytes` of text: ~64-byte lines, a form feed line every 60 lines. Reuses an
    /// existing file of the same size.
    private func generate(path: String, bytes: Int) throws {
        var st = stat()
        if stat(path, &st) == 0 && Int(st.st_size) == bytes { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { log("cannot create \(path)"); throw ExitCode(1) }
        defer { close(fd) }
        var chunk: [UInt8] = []
        chunk.reserveCapacity(4 << 20)
        var written = 0
        var line = 0
        while written < bytes {
            chunk.removeAll(keepingCapacity: true)
            while chunk.count < (4 << 20) - 128 {
                line += 1
                if line % 61 == 0 {
                    chunk.append(0x0C); chunk.append(0x0A)
                    continue
                }
                let text = "line \(line) of a generated document for pagesync-bench: lorem ipsum dolor sit\n"
                chunk.append(contentsOf: text.utf8)
            }
            let take = min(chunk.count, bytes - written)
            let n = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, take) }
            guard n == take else { log("short write to \(path)"); throw ExitCode(1) }
            written += take
        }
    }

    /// `count` sequential `TEXT <middle page>` requests on one blocking connection; microseconds.
    private func textLatencies(port: Int, count: Int) -> [Double] {
        guard let fd = BlockingSocket.connect(port: port) else { log("cannot connect to the daemon on port \(port)"); return [] }
        defer { close(fd) }
        var reader = BlockingLineReader(fd: fd)
        guard let pages = reader.withLine({ $0.kind == .hello ? $0.int("pages") : nil }) ?? nil else {
            log("no HELLO from the daemon"); return []
        }
        let request = CommandEncoder.bytes(.text(PageNumber(clamping: pages / 2, pageCount: pages)))
        var samples: [Double] = []
        for _ in 0...count {
            let t0 = MonotonicClock.nanoseconds()
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard reader.withLine({ $0.kind == .ok && $0.firstPlainWord(is: "TEXT") }) == true else { log("TEXT failed"); return samples }
            // The page's lines, up to the `.` that ends the reply.
            while reader.withLine({ $0.endsMultilineReply }) == false {}
            samples.append(Double(MonotonicClock.nanoseconds() - t0) / 1000)
        }
        return Array(samples.dropFirst())  // the first one warms caches
    }
}

/// Echoes a daemon log line to our stderr, indented.
enum FileHandleless {
    static func echo(_ line: String) { log("  | \(line)") }
}
