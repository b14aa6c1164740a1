import ArgumentParser
import UV
#if canImport(Glibc)
import Glibc
#endif

/// Appends result rows (`label<TAB>metric<TAB>n<TAB>value`) to a TSV file and echoes them.
final class ResultSink {
    let label: String
    private let file: UnsafeMutablePointer<FILE>?

    init(label: String, path: String?) {
        self.label = label
        file = path.flatMap { fopen($0, "a") }
    }

    deinit { if let file { fclose(file) } }

    func add(_ metric: String, n: Int = 0, _ value: Double) {
        let row = "\(label)\t\(metric)\t\(n)\t\(fmt(value, 2))\n"
        if let file { fputs(row, file); fflush(file) }
        writeAll(1, row)
    }
}

extension ResultSink {
    /// The rows of one fan-out latency measurement at N = `n`, from every change's microseconds
    /// until the last (`last`) and the first (`first`) follower had it. The first 5% of the
    /// changes are dropped as warm-up; then `<family>fanout_p50_us`, `_p90_`, `_p99_`, `_max_`,
    /// one `<family>fanout_sample_us` row per change (`report` pools them over the runs),
    /// `<family>fanout_first_p50_us` and `_first_p99_us`, and with `firstSamples` one
    /// `<family>fanout_first_sample_us` row per change. `run` writes the family "",
    /// `interleave` the family `interleaved_`.
    func addFanoutLatency(n: Int, last: [Double], first: [Double], family: String = "", firstSamples: Bool = false) {
        let prefix = family.split(separator: "_").map { $0 + " " }.joined()  // "interleaved "
        let warm = Array(last.dropFirst(max(1, last.count / 20)))
        if let p = Percentiles(warm) {
            add(family + "fanout_p50_us", n: n, p.p50)
            add(family + "fanout_p90_us", n: n, p.p90)
            add(family + "fanout_p99_us", n: n, p.p99)
            add(family + "fanout_max_us", n: n, p.max)
            // Every change's latency too: `report` pools them over the runs, so its
            // p99 rests on every run's slowest changes, not on two samples of one run.
            for value in warm { add(family + ReportCommand.sampleMetric, n: n, value) }
            log("\(label) N=\(n) \(prefix)fan-out: p50 \(fmt(p.p50)) p90 \(fmt(p.p90)) p99 \(fmt(p.p99)) max \(fmt(p.max)) us over \(p.count)")
        }
        // The same changes, until the first follower has each.
        let firstWarm = Array(first.dropFirst(max(1, first.count / 20)))
        if let p = Percentiles(firstWarm) {
            add(family + "fanout_first_p50_us", n: n, p.p50)
            add(family + "fanout_first_p99_us", n: n, p.p99)
            if firstSamples { for value in firstWarm { add(family + ReportCommand.firstSampleMetric, n: n, value) } }
            log("\(label) N=\(n) \(prefix)first follower: p50 \(fmt(p.p50)) p99 \(fmt(p.p99)) us")
        }
    }
}

/// The rows of one throughput phase of `run`.
struct ThroughputRows {
    var deliveriesPerSecond: String
    var changesPerSecond: String?
    var deliveredPercent: String
    var errors: String

    /// All changes back to back.
    static let backToBack = ThroughputRows(deliveriesPerSecond: "throughput_dps", changesPerSecond: "throughput_cps",
                                           deliveredPercent: "delivered_pct", errors: "throughput_errors")
    /// Each change once the previous one was acknowledged.
    static let paced = ThroughputRows(deliveriesPerSecond: "paced_dps", changesPerSecond: nil,
                                      deliveredPercent: "paced_delivered_pct", errors: "paced_errors")
}

/// `pagesync-bench run`: the measurement matrix against one target.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive followers and a driver against one target and print results.",
        discussion: """
            Results are rows "label<TAB>metric<TAB>n<TAB>value" on stdout (and appended to \
            --out); progress goes to stderr. Latencies in microseconds, throughput in \
            deliveries per second, memory in bytes per connection.
            """)

    @Option(help: "pagesyncd, redis, nats or floor.") var target: Target
    @Option(help: "Target host (loopback).") var host = "127.0.0.1"
    @Option(help: "Target port.") var port: Int
    @Option(name: .customLong("tls-ca"), help: ArgumentHelp("Followers (and churn connections) speak TLS to --port, verifying the server with this CA file (PEM); the driver stays on --driver-port in plaintext (default: no TLS).", valueName: "file")) var tlsCA: String?
    @Option(name: .customLong("driver-port"), help: "Port of the driver and pinger (default: --port); with --tls-ca or --ws, the daemon's plaintext port.") var driverPort: Int?
    @Option(name: .customLong("ws"), help: ArgumentHelp("Followers (and churn connections) are WebSockets: they upgrade this path (e.g. /ws) on --port, a pagesyncd --web-listen, and read each message as a line; the driver stays on --driver-port (default: no WebSocket).", valueName: "path")) var webSocketPath: String?
    @Option(name: .customLong("ping-timeout-ms"), help: "How long the idle test waits for every follower's PONG.") var pingTimeoutMs = 30_000
    @Option(name: .customLong("server-pid"), help: "The target's PID, for RSS and fd counts.") var serverPID: Int32?
    @Option(help: "Label for the result rows (default: the target).") var label: String?
    @Option(help: "Append result rows to this TSV file.") var out: String?
    @Option(help: "Follower counts, comma-separated.") var followers = "100,1000,10000"
    @Option(help: "Changes per latency measurement.") var changes = 200
    @Option(name: .customLong("throughput-deliveries"), help: "Aim for about this many deliveries per throughput measurement (changes = this / N, at most --throughput-changes).") var throughputDeliveries = 1_000_000
    @Option(name: .customLong("throughput-changes"), help: "Most changes per throughput measurement.") var throughputChanges = 1000
    @Option(help: "Pings for the round trip.") var pings = 2000
    @Option(help: "Payload bytes per delivery, LF included (pagesyncd: the driver's NAME is sized to match).") var payload = 90
    @Option(help: "Follower worker processes.") var workers = 2
    @Option(help: "Comma-separated subset of: rtt,fanout,idle,maxclients,churn (idle: hold --followers idle clients, RSS per client, then every one pings).") var tests = "rtt,fanout,maxclients,churn"
    @Option(name: .customLong("max-clients"), help: "Connections to attempt for max clients (default: 20000 minus the server's open fds, or 19990).") var maxClients: Int?
    @Option(name: .customLong("churn-ms"), help: "Churn duration in milliseconds.") var churnMs = 3000
    @Option(name: .customLong("churn-concurrency"), help: "Concurrent connect/ping/close chains per worker.") var churnConcurrency = 16
    @Option(name: .customLong("settle-ms"), help: "Pause before reading the server's RSS.") var settleMs = 1000
    @Option(name: .customLong("idle-warm-up"), help: "The idle test first opens this many clients and keeps them, unmeasured: what the first connections of a fresh server fault in once (code, tables) is not counted per client.") var idleWarmUp = 0
    @Option(name: .customLong("follower-ports"), help: "Ports the followers connect to, comma-separated; worker i uses the (i mod count)-th (default: --port). For several daemons sharing rooms: the driver stays on --port.") var followerPorts: String?

    func run() throws {
        let tests = Set(self.tests.split(separator: ",").map(String.init))
        let sink = ResultSink(label: label ?? target.rawValue, path: out)
        let runner = try LoopRunner()
        let session = TargetSession(runner: runner, hub: Hub(loop: runner.loop, target: target, host: host, port: driverPort ?? port, payload: Payload(size: payload)))
        let hub = session.hub
        defer {
            session.stopWorkers()
            runner.shutdown()
        }
        // Workers: re-exec ourselves.
        let spread = followerPorts.map { $0.split(separator: ",").compactMap { Int($0) } } ?? []
        try session.startWorkers(count: max(1, workers), host: host, ports: spread.isEmpty ? [port] : spread, tlsCA: tlsCA, webSocketPath: webSocketPath)

        if let driverError = session.connectDriver() { log("\(target): \(driverError)"); throw ExitCode(1) }

        func rss() -> Int? { serverPID.flatMap { ProcessProbe.statusKiB(pid: $0, field: "VmRSS") } }
        func fds() -> Int? { serverPID.flatMap { ProcessProbe.fdCount(pid: $0) } }
        let initialFDs = fds()

        func open(_ count: Int, idleTimeoutMs: Int) -> TargetSession.Opened { session.open(count, idleTimeoutMs: idleTimeoutMs) }
        func closeAll() { session.closeAll() }
        /// Opens `count` followers and calls `opened` with them and the seconds it took; then, after
        /// `--settle-ms`, adds row `metric`: how much the server's RSS grew over the open, in bytes
        /// per follower held (with `--server-pid`, when any opened). `what` names the N in the log.
        func openMeasuringRSS(_ count: Int, idleTimeoutMs: Int, metric: String, what: String,
                              _ opened: (TargetSession.Opened, Double) -> Void) -> TargetSession.Opened {
            let before = rss()
            let started = MonotonicClock.nanoseconds()
            let result = open(count, idleTimeoutMs: idleTimeoutMs)
            opened(result, Double(MonotonicClock.nanoseconds() - started) / 1e9)
            sleepMilliseconds(settleMs)
            if let before, let after = rss(), result.ready > 0 {
                let perConnection = Double(after - before) * 1024 / Double(result.ready)
                sink.add(metric, n: count, perConnection)
                log("\(sink.label) \(what): RSS \(before) -> \(after) KiB, \(fmt(perConnection, 0)) B per connection")
            }
            return result
        }

        if tests.contains("rtt") {
            let (samples, error): ([Double], String?) = runner.sync { done in hub.value.roundTrips(count: pings) { done(($0, $1)) } }
            if let error { log("rtt: \(error)") }
            if let p = Percentiles(samples) {
                sink.add("rtt_p50_us", p.p50)
                sink.add("rtt_p99_us", p.p99)
                log("\(sink.label) rtt: p50 \(fmt(p.p50)) us, p99 \(fmt(p.p99)) us over \(p.count)")
            }
        }

        if tests.contains("fanout") {
            for n in followers.split(separator: ",").compactMap({ Int($0) }) {
                let opened = openMeasuringRSS(n, idleTimeoutMs: 5000, metric: "mem_per_conn_bytes", what: "N=\(n)") { opened, _ in
                    log("\(sink.label) N=\(n): \(opened.ready) followers ready, \(opened.errors) errors \(opened.reasons)")
                    if opened.errors > 0 { sink.add("open_errors", n: n, Double(opened.errors)) }
                }
                let links = opened.links.map(\.value)
                let wrapped = LoopBound(links)
                guard opened.ready > 0 else { closeAll(); continue }

                // Latency.
                session.arm(wrapped, changes: changes, mode: "L")
                let (latencies, firstLatencies, latencyError): ([Double], [Double], String?) = runner.sync { done in
                    hub.value.latency(wrapped.value, changes: changes, stallMs: 10_000) { done(($0, $1, $2)) }
                }
                if let latencyError { log("\(sink.label) N=\(n) latency: \(latencyError)"); sink.add("fanout_errors", n: n, 1) }
                sink.addFanoutLatency(n: n, last: latencies, first: firstLatencies)

                /// One throughput phase of `m` changes: arms the workers, runs `phase` (`Hub.throughput`
                /// or `Hub.paced`) and adds its rows, named by `rows`.
                func throughputPhase(_ name: String, rows: ThroughputRows, m: Int,
                                     _ phase: @escaping (Hub, [Link], @escaping (Int, Double, Int, String?) -> Void) -> Void) {
                    session.arm(wrapped, changes: m, mode: "T")
                    let (delivered, seconds, lost, error): (Int, Double, Int, String?) = runner.sync { done in
                        phase(hub.value, wrapped.value) { done(($0, $1, $2, $3)) }
                    }
                    if let error { log("\(sink.label) N=\(n) \(name): \(error)"); sink.add(rows.errors, n: n, 1) }
                    guard seconds > 0 else { return }
                    let expected = opened.ready * m
                    sink.add(rows.deliveriesPerSecond, n: n, Double(delivered) / seconds)
                    if let changesPerSecond = rows.changesPerSecond { sink.add(changesPerSecond, n: n, Double(m) / seconds) }
                    sink.add(rows.deliveredPercent, n: n, 100 * Double(delivered) / Double(expected))
                    log("\(sink.label) N=\(n) \(name): \(delivered)/\(expected) deliveries (\(m) changes) in \(fmt(seconds * 1000)) ms = \(fmt(Double(delivered) / seconds, 0))/s, lost \(lost)")
                }

                // Throughput: all changes back to back.
                let m = max(10, min(throughputChanges, throughputDeliveries / max(1, opened.ready)))
                throughputPhase("throughput", rows: .backToBack, m: m) { hub, links, done in
                    hub.throughput(links, changes: m, stallMs: 120_000, done)
                }
                // Paced throughput: each change waits for the server's acknowledgement of the
                // previous one, so no server can merge changes that arrive in one read.
                throughputPhase("paced throughput", rows: .paced, m: m) { hub, links, done in
                    hub.paced(links, changes: m, stallMs: 120_000, done)
                }
                closeAll()
                sleepMilliseconds(300)
            }
            let eventBytes: Int = runner.sync { done in done(hub.value.observedEventBytes) }
            sink.add("payload_bytes", Double(target == .pagesyncd ? eventBytes : payload))
            let driverErrors: Int = runner.sync { done in done(hub.value.driverErrors) }
            if driverErrors > 0 { sink.add("driver_errors", Double(driverErrors)) }
        }

        if tests.contains("idle") {
            // Idle clients held, their cost in server memory, then one ping each: all must answer.
            for n in followers.split(separator: ",").compactMap({ Int($0) }) {
                var warmed = 0
                if idleWarmUp > 0 {
                    let warm = open(idleWarmUp, idleTimeoutMs: 10_000)
                    warmed = warm.ready
                    log("\(sink.label) idle warm-up: \(warm.ready) held, \(warm.errors) errors")
                }
                sleepMilliseconds(settleMs)
                let opened = openMeasuringRSS(n, idleTimeoutMs: 10_000, metric: "idle_mem_per_conn_bytes", what: "idle N=\(n)") { opened, seconds in
                    sink.add("idle_ready", n: n, Double(opened.ready))
                    if opened.errors > 0 { sink.add("idle_open_errors", n: n, Double(opened.errors)) }
                    log("\(sink.label) idle N=\(n): \(opened.ready) ready, \(opened.errors) errors \(opened.reasons) in \(fmt(seconds, 2)) s")
                }
                let links = opened.links.map(\.value)
                let wrapped = LoopBound(links)
                let replies: [String] = runner.sync { done in
                    hub.value.request(wrapped.value, wrapped.value.map { _ in "PINGALL \(pingTimeoutMs)" }, expect: "PONGED", done)
                }
                // Every held client pings, the warm-up's too: theirs are not this N's.
                let pongs = replies.reduce(0) { $0 + (Int($1.split(separator: " ")[1]) ?? 0) } - warmed
                sink.add("idle_pongs", n: n, Double(pongs))
                log("\(sink.label) idle N=\(n): \(pongs) of \(opened.ready) answered a PING")
                closeAll()
                sleepMilliseconds(300)
            }
        }

        if tests.contains("maxclients") {
            // Wait (up to 10 s) until the server has closed what earlier phases left behind.
            var baseFDs = fds()
            if let initialFDs {
                var waitedMs = 0
                while let now = baseFDs, now > initialFDs, waitedMs < 10_000 {
                    sleepMilliseconds(100); waitedMs += 100
                    baseFDs = fds()
                }
            }
            let attempt = maxClients ?? (20_000 - (baseFDs ?? 10))
            let started = MonotonicClock.nanoseconds()
            let opened = open(attempt, idleTimeoutMs: 3000)
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            let serverFDs = fds()
            sink.add("max_clients_attempted", Double(attempt))
            sink.add("max_clients_held", Double(opened.ready))
            sink.add("max_clients_errors", Double(opened.errors))
            log("\(sink.label) max clients: \(opened.ready) of \(attempt) held, \(opened.errors) errors \(opened.reasons) in \(fmt(seconds, 2)) s; server fds \(baseFDs.map(String.init) ?? "?") -> \(serverFDs.map(String.init) ?? "?")")
            closeAll()
            // The next phase counts the server's fds: wait (up to 10 s) until it has closed
            // these, polling as above, or 2 s when its fds cannot be read.
            if let baseFDs {
                var waitedMs = 0
                while let now = fds(), now > baseFDs, waitedMs < 10_000 {
                    sleepMilliseconds(20); waitedMs += 20
                }
            } else {
                sleepMilliseconds(2000)
            }
        }

        if tests.contains("churn") {
            sleepMilliseconds(settleMs)
            let rssBefore = rss(), fdsBefore = fds()
            let started = MonotonicClock.nanoseconds()
            let replies: [String] = runner.sync { done in
                hub.value.request(hub.value.workers, hub.value.workers.map { _ in "CHURN \(churnConcurrency) \(churnMs)" }, expect: "CHURNED", done)
            }
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            var cycles = 0, errors = 0, reasons: [String] = []
            for reply in replies {
                let words = reply.split(separator: " ")
                cycles += Int(words[1]) ?? 0
                errors += Int(words[2]) ?? 0
                if words[3] != "-" { reasons.append(String(words[3])) }
            }
            sink.add("churn_cps", Double(cycles) / seconds)
            sink.add("churn_errors", Double(errors))
            sleepMilliseconds(settleMs)
            let rssAfter = rss(), fdsAfter = fds()
            if let rssBefore, let rssAfter { sink.add("churn_rss_delta_kib", Double(rssAfter - rssBefore)) }
            if let fdsBefore, let fdsAfter { sink.add("churn_fd_delta", Double(fdsAfter - fdsBefore)) }
            log("\(sink.label) churn: \(cycles) connect/ping/close cycles in \(fmt(seconds, 2)) s = \(fmt(Double(cycles) / seconds, 0))/s, \(errors) errors \(reasons.joined(separator: ",")); RSS \(rssBefore.map(String.init) ?? "?") -> \(rssAfter.map(String.init) ?? "?") KiB, fds \(fdsBefore.map(String.init) ?? "?") -> \(fdsAfter.map(String.init) ?? "?")")
        }
    }
}

/// `pagesync-bench worker`: internal; started by `run`.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "worker", abstract: "Internal: a follower process started by run.", shouldDisplay: false)
    @Option(name: .customLong("control-port")) var controlPort: Int
    @Option var target: Target
    @Option var host: String
    @Option var port: Int
    @Option var id: Int
    @Option(name: .customLong("tls-ca")) var tlsCA: String?
    @Option(name: .customLong("ws")) var webSocketPath: String?

    func run() throws {
        let loop = try EventLoop()
        let tls = try tlsCA.map { path throws(TLSError) in try TLSContext.client(caFile: path) }
        let worker = Worker(loop: loop, target: target, host: host, port: port, tls: tls, webSocketPath: webSocketPath)
        worker.start(controlPort: controlPort, id: id)
        loop.run()
    }
}

/// `pagesync-bench floor-server`: the raw epoll broadcaster.
struct FloorServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "floor-server", abstract: "Run the raw floor: a minimal epoll broadcaster.")
    @Option(help: "Port on 127.0.0.1 (0 = free port, printed on stdout).") var port = 0

    func run() throws {
        let server = FloorServer(port: port)
        writeAll(1, "listening on 127.0.0.1:\(server.port)\n")
        server.run()
    }
}
