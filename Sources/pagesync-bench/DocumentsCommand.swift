import ArgumentParser
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { log("cannot connect to the daemon on port \(port)"); return [] }
        var reader = BlockingLineReader(fd: fd)
        guard let hello = reader.line(), hello.hasPrefix("HELLO"), let pages = Int(fields(of: hello)["pages"] ?? "") else {
            log("no HELLO from the daemon"); return []
        }
        let middle = max(1, pages / 2)
        let request = Array("TEXT \(middle)\n".utf8)
        var samples: [Double] = []
        for _ in 0...count {
            let t0 = MonotonicClock.nanoseconds()
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard let header = reader.line(), header.hasPrefix("OK TEXT") else { log("TEXT failed"); return samples }
            while let line = reader.line(), line != "." {}
            samples.append(Double(MonotonicClock.nanoseconds() - t0) / 1000)
        }
        return Array(samples.dropFirst())  // the first one warms caches
    }
}

/// Echoes a daemon log line to our stderr, indented.
enum FileHandleless {
    static func echo(_ line: String) { log("  | \(line)") }
}

/// Line reader over a blocking socket.
struct BlockingLineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    init(fd: Int32) { self.fd = fd }

    /// The next line without its LF (and CR); nil on EOF or error.
    mutating func line() -> String? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                var end = nl
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                let text = String(decoding: buffer[start..<end], as: UTF8.self)
                start = nl + 1
                if start > 65536 { buffer.removeFirst(start); start = 0 }
                return text
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
        }
    }
}
