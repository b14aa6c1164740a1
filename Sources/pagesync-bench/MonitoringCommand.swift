import ArgumentParser
import PageSyncCore
import Synchronization
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench monitoring`: what `INFO` and the metrics listener cost pagesyncd, measured
/// from outside against a daemon started with `--metrics-listen` and rooms `r0 ...` that wrap.
struct MonitoringCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitoring",
        abstract: "INFO under a change load, scrapes with many clients, PING during a scrape storm.",
        discussion: """
            Three phases. (1) --clients closed-loop clients change rooms r0 ... (as `durable`) \
            while one more client sends INFO and PING in turn: info_p50_us, info_p99_us, \
            info_max_us, ping_p99_us and the load's changes per second, info_load_cps (n = the \
            clients). (2) --idle clients join rooms r0 ... r<rooms-1>; GET /metrics is timed back \
            to back (scrape_p50_us, scrape_p99_us, scrape_max_us; and the daemon's own time per rendering, \
            scrape_loop_p50_us, scrape_loop_p99_us, scrape_loop_max_us, from its \
            pagesync_metrics_render_duration_seconds; scrape_bytes; n = the idle clients), then a client in r0 times NEXT to its own PAGE, alone (change_p99_us) and \
            while another scrapes without pause (change_scraping_p99_us). (3) PING round trips \
            alone (storm_ping_alone_p99_us), then while --storm connections at once scrape, \
            --storm-rounds times (storm_ping_p99_us; storm_answered, storm_refused, storm_closed, \
            storm_lost: connections per outcome over every round; n = --storm).
            """)

    @Option(help: "The daemon's line-protocol port.") var port: Int
    @Option(name: .customLong("metrics-port"), help: "Its metrics listener's port.") var metricsPort: Int
    @Option(help: "Clients changing rooms in phase 1.") var clients = 20
    @Option(help: "Seconds of phase 1.") var seconds = 3.0
    @Option(help: "Idle clients of phase 2.") var idle = 10_000
    @Option(help: "Rooms the idle clients spread over (r0 ...).") var rooms = 100
    @Option(help: "Scrapes, and changes, timed in phase 2.") var scrapes = 200
    @Option(help: "Connections of one storm in phase 3.") var storm = 1000
    @Option(name: .customLong("storm-rounds"), help: "Storms in phase 3.") var stormRounds = 5
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        raiseOpenFileLimit(to: idle + storm + 256)
        try infoUnderLoad(sink)
        try scrapesWithIdleClients(sink)
        try pingDuringStorms(sink)
    }

    // MARK: - Phase 1: INFO under a change load

    private func infoUnderLoad(_ sink: ResultSink) throws {
        let runner = try LoopRunner()
        defer { runner.shutdown() }
        let bench = LoopBound(DurableBench(loop: runner.loop, target: .pagesyncd, host: "127.0.0.1", ports: [port], roomPrefix: "r"))
        let count = clients
        if let error: String = runner.sync({ done in bench.value.connect(count, done) }) {
            log("monitoring: \(error)")
            throw ExitCode(1)
        }
        let measuredNs = UInt64(seconds * 1e9)
        let load = Handoff<DurableBench.Result>()
        spawnThread { load.put(runner.sync { done in bench.value.measure(warmupNs: 300_000_000, measuredNs: measuredNs, done) }) }
        var probe = try LineProbe(port: port)
        sleepMilliseconds(300)
        var infoTimes: [Double] = []
        var pingTimes: [Double] = []
        let end = MonotonicClock.nanoseconds() + measuredNs
        while MonotonicClock.nanoseconds() < end {
            guard let info = probe.roundTrip(Self.info, multiline: true), let ping = probe.roundTrip(Self.ping) else { break }
            infoTimes.append(info)
            pingTimes.append(ping)
        }
        let result = load.take()
        _ = runner.sync { (done: @escaping (Bool) -> Void) in bench.value.closeAll(); done(true) }
        if let p = Percentiles(infoTimes) {
            sink.add("info_p50_us", n: count, p.p50)
            sink.add("info_p99_us", n: count, p.p99)
            sink.add("info_max_us", n: count, p.max)
        }
        if let p = Percentiles(pingTimes) { sink.add("ping_p99_us", n: count, p.p99) }
        sink.add("info_load_cps", n: count, Double(result.latencies.count) / seconds)
        log("monitoring: \(infoTimes.count) INFO and PING during \(result.latencies.count) changes from \(count) clients")
    }

    // MARK: - Phase 2: scrapes with many clients

    private func scrapesWithIdleClients(_ sink: ResultSink) throws {
        var idlers: [Int32] = []
        defer { for fd in idlers { close(fd) } }
        for i in 0..<idle {
            guard let fd = BlockingSocket.connect(port: port),
                  BlockingSocket.sendAll(fd, CommandEncoder.bytes(.join("r\(i % rooms)")))
            else { log("monitoring: connecting idle client \(i) failed"); throw ExitCode(1) }
            idlers.append(fd)
        }
        for fd in idlers {  // each has its HELLO and OK JOIN
            var reader = BlockingLineReader(fd: fd)
            guard reader.line() != nil, reader.line() != nil else { throw ExitCode(1) }
        }
        guard let scraper = BlockingSocket.connect(port: metricsPort) else { throw ExitCode(1) }
        defer { close(scraper) }
        var scrapeTimes: [Double] = []
        var renderTimes: [Double] = []
        var bytes = 0
        for _ in 0..<scrapes {
            let started = MonotonicClock.nanoseconds()
            guard let body = Self.get(scraper, keepAlive: true) else { throw ExitCode(1) }
            scrapeTimes.append(Double(MonotonicClock.nanoseconds() - started) / 1000)
            bytes = body.count
            // The daemon's own figure: the loop time of the rendering before this one.
            if let render = Self.sample(body, "pagesync_metrics_render_duration_seconds") { renderTimes.append(render * 1e6) }
        }
        if let p = Percentiles(scrapeTimes) {
            sink.add("scrape_p50_us", n: idle, p.p50)
            sink.add("scrape_p99_us", n: idle, p.p99)
            sink.add("scrape_max_us", n: idle, p.max)
        }
        if let p = Percentiles(renderTimes) {
            sink.add("scrape_loop_p50_us", n: idle, p.p50)
            sink.add("scrape_loop_p99_us", n: idle, p.p99)
            sink.add("scrape_loop_max_us", n: idle, p.max)
        }
        sink.add("scrape_bytes", n: idle, Double(bytes))
        var driver = try LineProbe(port: port)
        guard driver.roundTrip(CommandEncoder.bytes(.join("r0"))) != nil else { throw ExitCode(1) }
        let alone = (0..<scrapes).compactMap { _ in driver.change() }
        let stop = Atomic<Bool>(false)
        let scraping = Handoff<Int>()
        let metricsPort = self.metricsPort
        spawnThread {
            var done = 0
            if let fd = BlockingSocket.connect(port: metricsPort) {
                while !stop.load(ordering: .relaxed), Self.get(fd, keepAlive: true) != nil { done += 1 }
                close(fd)
            }
            scraping.put(done)
        }
        let during = (0..<scrapes).compactMap { _ in driver.change() }
        stop.store(true, ordering: .relaxed)
        let scraped = scraping.take()
        if let p = Percentiles(alone) { sink.add("change_p99_us", n: idle, p.p99) }
        if let p = Percentiles(during) { sink.add("change_scraping_p99_us", n: idle, p.p99) }
        log("monitoring: \(idle) idle clients in \(rooms) rooms; \(scrapes) scrapes of \(bytes) bytes; \(scraped) scrapes beside \(during.count) changes")
    }

    // MARK: - Phase 3: PING during scrape storms

    private func pingDuringStorms(_ sink: ResultSink) throws {
        var probe = try LineProbe(port: port)
        sleepMilliseconds(1000)  // the idle clients of phase 2 are gone
        let alone = (0..<1000).compactMap { _ in probe.roundTrip(Self.ping) }
        let finished = Atomic<Bool>(false)
        let outcomes = Handoff<[Int]>()
        let (metricsPort, storm, rounds) = (self.metricsPort, self.storm, stormRounds)
        spawnThread {
            var counts = [0, 0, 0, 0]  // answered 200, answered 503, closed, lost
            for _ in 0..<rounds {
                for status in Self.scrapeAtOnce(port: metricsPort, connections: storm) {
                    counts[status == 200 ? 0 : status == 503 ? 1 : status == 0 ? 2 : 3] += 1
                }
            }
            finished.store(true, ordering: .relaxed)
            outcomes.put(counts)
        }
        var during: [Double] = []
        while !finished.load(ordering: .relaxed) {
            guard let time = probe.roundTrip(Self.ping) else { break }
            during.append(time)
        }
        let counts = outcomes.take()
        if let p = Percentiles(alone) { sink.add("storm_ping_alone_p99_us", n: storm, p.p99) }
        if let p = Percentiles(during) { sink.add("storm_ping_p99_us", n: storm, p.p99) }
        for (name, value) in zip(["storm_answered", "storm_refused", "storm_closed", "storm_lost"], counts) {
            sink.add(name, n: storm, Double(value))
        }
        log("monitoring: \(during.count) PINGs during \(stormRounds) storms of \(storm) scrapes")
    }

    // MARK: - Pieces

    static let info = CommandEncoder.bytes(.info(nil))
    static let ping = CommandEncoder.bytes(.ping("p"))

    /// The value of the sample `name` (no labels) in a `/metrics` body.
    static func sample(_ body: [UInt8], _ name: String) -> Double? {
        let prefix = name + " "
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            return Double(line.dropFirst(prefix.count))
        }
        return nil
    }

    /// `GET /metrics` on a connected socket and its whole answer read; the body, or nil when
    /// the answer is not a 200 (or the connection failed).
    static func get(_ fd: Int32, keepAlive: Bool) -> [UInt8]? {
        let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (keepAlive ? "" : "Connection: close\r\n") + "\r\n"
        guard BlockingSocket.sendAll(fd, Array(request.utf8)) else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let (status, length, headEnd) = HTTPHead.parse(received), received.count >= headEnd + length {
                return status == 200 ? Array(received[headEnd..<(headEnd + length)]) : nil
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            received += buffer[0..<n]
        }
    }

    /// `connections` connections at once, each sending `GET /metrics` and reading until closed
    /// (10 s at most): the status of each one's answer, 0 for a close without one, -1 for neither.
    static func scrapeAtOnce(port: Int, connections: Int) -> [Int] {
        let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for _ in 0..<connections {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { break }
            _ = withLoopbackAddress(port: port) { Glibc.connect(fd, $0, $1) }
            fds.append(fd)
        }
        var sent = [Bool](repeating: false, count: fds.count)
        var status = [Int](repeating: -1, count: fds.count)
        var open = Set(fds.indices)
        var received = [[UInt8]](repeating: [], count: fds.count)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while !open.isEmpty && MonotonicClock.nanoseconds() < deadline {
            let order = Array(open)
            var polled = order.map { pollfd(fd: fds[$0], events: Int16(sent[$0] ? POLLIN : POLLOUT), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 100) >= 0 || errno == EINTR else { break }
            for (slot, i) in order.enumerated() where polled[slot].revents != 0 {
                if !sent[i] {
                    let n = request.withUnsafeBytes { send(fds[i], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n == request.count { sent[i] = true } else if n < 0 && errno != EAGAIN { status[i] = 0; open.remove(i) }
                    continue
                }
                let n = buffer.withUnsafeMutableBytes { recv(fds[i], $0.baseAddress, $0.count, 0) }
                if n > 0 { received[i] += buffer[0..<n]; continue }
                if n < 0 && errno == EAGAIN { continue }
                status[i] = HTTPHead.parse(received[i]).map { $0.status } ?? 0
                open.remove(i)
            }
        }
        return status
    }

    private func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// The status line and `Content-Length` of an HTTP response head.
enum HTTPHead {
    /// `(status, content length, where the body starts)` once `bytes` hold a whole head.
    static func parse(_ bytes: [UInt8]) -> (status: Int, length: Int, headEnd: Int)? {
        guard bytes.count >= 4 else { return nil }
        var end = 0
        while end + 4 <= bytes.count && !(bytes[end] == 13 && bytes[end + 1] == 10 && bytes[end + 2] == 13 && bytes[end + 3] == 10) { end += 1 }
        guard end + 4 <= bytes.count else { return nil }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n")
        guard let first = lines.first, let status = first.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        let length = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingPrefix(" ")) } ?? 0
        return (status, length, end + 4)
    }
}

/// One line-protocol client on a blocking socket, timing round trips in microseconds.
struct LineProbe {
    let fd: Int32
    var reader: BlockingLineReader

    init(port: Int) throws {
        guard let fd = BlockingSocket.connect(port: port) else { throw ExitCode(1) }
        self.fd = fd
        reader = BlockingLineReader(fd: fd)
        _ = reader.line()  // HELLO
    }

    /// Sends `line` and reads its reply (to its `.` line when `multiline`), skipping `PAGE`
    /// events; the microseconds it took, or nil when the connection failed.
    mutating func roundTrip(_ line: [UInt8], multiline: Bool = false) -> Double? {
        let started = MonotonicClock.nanoseconds()
        guard BlockingSocket.sendAll(fd, line) else { return nil }
        while let reply = reader.line() {
            if reply.hasPrefix("PAGE ") { continue }
            if multiline { while let content = reader.line(), content != "." {} }
            return Double(MonotonicClock.nanoseconds() - started) / 1000
        }
        return nil
    }

    /// `NEXT`, timed until its own `PAGE` arrives (its room's fan-out reached it).
    mutating func change() -> Double? {
        let started = MonotonicClock.nanoseconds()
        guard BlockingSocket.sendAll(fd, CommandEncoder.bytes(.navigate(.next, ifVersion: nil))) else { return nil }
        while let line = reader.line() {
            if line.hasPrefix("PAGE ") { return Double(MonotonicClock.nanoseconds() - started) / 1000 }
        }
        return nil
    }
}

/// Runs `body` on a new thread of its own (not joined: it reports through a ``Handoff``).
func spawnThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    pthread_create(&thread, nil, { argument in
        Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(Box(body)).toOpaque())
    pthread_detach(thread)
}
