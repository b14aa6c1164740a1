import ArgumentParser
import UV

/// One `--target` of `interleave`: `[LABEL=]KIND:PORT[,driver-port=PORT][,tls-ca=FILE][,ws=PATH][,change=line]`.
struct TargetSpec: ExpressibleByArgument, Sendable {
    /// Names the target's result rows (default: the kind).
    var label: String
    var target: Target
    /// Where the followers connect.
    var port: Int
    /// Where the driver connects (default: `port`); with `tlsCA`, the daemon's plaintext port.
    var driverPort: Int?
    /// Followers speak TLS, verifying the server with this CA file (PEM).
    var tlsCA: String?
    /// Followers are WebSockets upgrading this path on `port` (pagesyncd's web listener).
    var webSocketPath: String?
    /// pagesyncd: the driver's changes are `LINE` (a presenter's scroll) instead of page turns.
    var lineChanges = false

    init?(argument: String) {
        var options = argument.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var address = options.removeFirst()
        var label: String?
        if let eq = address.firstIndex(of: "=") {
            label = String(address[..<eq])
            address = String(address[address.index(after: eq)...])
        }
        guard let colon = address.lastIndex(of: ":"), let target = Target(rawValue: String(address[..<colon])),
              let port = Int(address[address.index(after: colon)...]), port > 0 else { return nil }
        self.target = target
        self.port = port
        self.label = label ?? target.rawValue
        guard !self.label.isEmpty, !self.label.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) else { return nil }
        for option in options {
            guard let eq = option.firstIndex(of: "=") else { return nil }
            let value = String(option[option.index(after: eq)...])
            switch option[..<eq] {
            case "driver-port":
                guard let port = Int(value), port > 0 else { return nil }
                driverPort = port
            case "tls-ca":
                guard !value.isEmpty else { return nil }
                tlsCA = value
            case "ws":
                guard value.hasPrefix("/"), target == .pagesyncd else { return nil }
                webSocketPath = value
            case "change":
                guard value == "line" || value == "page", target == .pagesyncd else { return nil }
                lineChanges = value == "line"
            default:
                return nil
            }
        }
    }
}

/// `pagesync-bench interleave`: fan-out latency of several targets in the same minutes, change by
/// change, so that whatever else the machine does hits every target alike.
struct InterleaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "interleave",
        abstract: "Fan-out latency of several targets at once, interleaved change by change.",
        discussion: """
            For each N, every target's N followers are connected at the same time. Round r sends \
            change r to one target, waits until all of its followers have it, then sends change r \
            to the next target, and so on; round r starts with the ((r - 1) mod T)-th target, so \
            no target always goes first. Each change's latency (send until the last follower has \
            it) and first-follower latency are recorded per target. Rows are those of run's \
            fan-out latency under the metric family "interleaved_" (interleaved_fanout_p50_us, \
            ..._p99_us, ..._first_p50_us, one interleaved_fanout_sample_us and one \
            interleaved_fanout_first_sample_us row per change after the first 5%), labelled per \
            target; `report` pools them into the table "Fan-out, interleaved change by change".
            """)

    /// Prefix of every metric this command writes.
    static let family = ReportCommand.interleavedFamily
    /// Followers one worker process holds at most (each is a file descriptor; the limit is 20,000).
    static let followersPerWorker = 9000

    @Option(name: .customLong("target"), help: ArgumentHelp(
        "A target, [LABEL=]KIND:PORT[,driver-port=PORT][,tls-ca=FILE][,ws=PATH]: KIND is pagesyncd, redis, nats or floor; LABEL (default KIND) names its rows, e.g. pagesyncd-always=pagesyncd:7001; tls-ca: its followers speak TLS to PORT and the driver uses driver-port in plaintext; ws (pagesyncd): its followers are WebSockets upgrading that path on PORT (the web listener), the driver on driver-port. Repeat for each target; labels must differ.",
        valueName: "spec")) var targets: [TargetSpec]
    @Option(help: "Target host (loopback).") var host = "127.0.0.1"
    @Option(help: "Follower counts, comma-separated; for each, every target has that many followers at once.") var followers = "100,1000,10000"
    @Option(help: "Changes per target and N (rounds).") var changes = 200
    @Option(help: "Payload bytes per delivery, LF included (pagesyncd: the driver's NAME is sized to match).") var payload = 90
    @Option(help: "Follower worker processes per target (raised so that none holds more than 9,000 followers).") var workers = 2
    @Option(help: "Append result rows to this TSV file.") var out: String?
    @Option(name: .customLong("settle-ms"), help: "Pause after every target's followers are connected, before the first change.") var settleMs = 1000
    @Option(name: .customLong("stall-ms"), help: "Give up when a change has not reached every follower of its target within this long.") var stallMs = 10_000

    func validate() throws {
        guard !targets.isEmpty else { throw ValidationError("give at least one --target") }
        var seen = Set<String>()
        for spec in targets where !seen.insert(spec.label).inserted {
            throw ValidationError("the label \(spec.label) is given twice: name pagesyncd targets apart, e.g. pagesyncd-always=pagesyncd:PORT")
        }
        guard changes >= 1 else { throw ValidationError("--changes must be at least 1") }
        guard !counts.isEmpty else { throw ValidationError("--followers needs at least one count above 0") }
    }

    private var counts: [Int] { followers.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 } }

    func run() throws {
        let counts = self.counts
        let perTarget = max(1, workers, ((counts.max() ?? 0) + Self.followersPerWorker - 1) / Self.followersPerWorker)
        if perTarget > workers { log("interleave: \(perTarget) workers per target (at most \(Self.followersPerWorker) followers each)") }
        let sinks = targets.map { ResultSink(label: $0.label, path: out) }
        let labels = targets.map(\.label)
        let runner = try LoopRunner()
        var sessions: [TargetSession] = []
        defer {
            for session in sessions { session.stopWorkers() }
            runner.shutdown()
        }
        for spec in targets {
            let hub = Hub(loop: runner.loop, target: spec.target, host: host, port: spec.driverPort ?? spec.port, payload: Payload(size: payload))
            hub.lineChanges = spec.lineChanges
            let session = TargetSession(runner: runner, hub: hub)
            sessions.append(session)
            try session.startWorkers(count: perTarget, host: host, ports: [spec.port], tlsCA: spec.tlsCA, webSocketPath: spec.webSocketPath)
            if let error = session.connectDriver() { log("\(spec.label): \(error)"); throw ExitCode(1) }
        }

        for n in counts {
            // Every target's followers, one target after the other, then all held at once.
            var links: [[Link]] = []
            for (i, session) in sessions.enumerated() {
                let opened = session.open(n, idleTimeoutMs: 5000)
                log("\(labels[i]) N=\(n): \(opened.ready) followers ready, \(opened.errors) errors \(opened.reasons)")
                if opened.errors > 0 { sinks[i].add(Self.family + "open_errors", n: n, Double(opened.errors)) }
                links.append(opened.links.map(\.value))
            }
            sleepMilliseconds(settleMs)
            let measured = links.indices.filter { !links[$0].isEmpty }
            for i in measured { sessions[i].arm(LoopBound(links[i]), changes: changes, mode: "L") }
            let hubs = LoopBound(measured.map { sessions[$0].hub.value })
            let measuredLinks = LoopBound(measured.map { links[$0] })
            let measuredLabels = measured.map { labels[$0] }
            let started = MonotonicClock.nanoseconds()
            let (last, first, error): ([[Double]], [[Double]], String?) = runner.sync { done in
                let probes = zip(hubs.value, measuredLinks.value).map { LatencyProbe(hub: $0, links: $1, changes: changes) }
                LatencyProbe.rounds(probes, labels: measuredLabels, loop: runner.loop, stallMs: stallMs) { done(($0, $1, $2)) }
            }
            log("interleave N=\(n): \(changes) round(s) over \(measured.count) target(s) in \(fmt(Double(MonotonicClock.nanoseconds() - started) / 1e9, 2)) s")
            if let error { log("interleave N=\(n): \(error)") }
            for (k, i) in measured.enumerated() {
                if error != nil { sinks[i].add(Self.family + "fanout_errors", n: n, 1) }
                sinks[i].addFanoutLatency(n: n, last: last[k], first: first[k], family: Self.family, firstSamples: true)
            }
            for session in sessions { session.closeAll() }
            sleepMilliseconds(300)
        }
    }
}
