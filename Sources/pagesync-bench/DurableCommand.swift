import ArgumentParser
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench durable`: durable-change throughput with closed-loop clients, one per room.
///
/// Each client owns one room (pagesyncd: room `<prefix><i>`, joined with `JOIN`; redis: key
/// `room:<i>`), sends one change, waits for its reply, and sends the next. pagesyncd's change
/// is `NEXT` in a room that wraps (so it never gets `ERR 416`); redis's is `SET room:<i> <n>`.
/// What the server does to make the change durable (journal batch/always, appendfsync) is the
/// server's configuration, not the client's.
struct DurableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "durable",
        abstract: "Closed-loop durable-change throughput: one client per room, one change in flight each.",
        discussion: """
            Rows: durable_cps (changes acknowledged per second, all clients together), \
            durable_p50_us and durable_p99_us (per change, send to reply), durable_errors \
            (ERR replies), each with n = the client count. Replies are counted during \
            --seconds after --warmup-ms; every client then finishes its change in flight.
            """)

    @Option(help: "pagesyncd or redis.") var target: Target
    @Option(help: "Target host (loopback).") var host = "127.0.0.1"
    @Option(help: "Target port.") var port: Int
    @Option(help: "Ports the clients connect to, comma-separated; client i uses the (i mod count)-th (default: --port). For several daemons sharing rooms.") var ports: String?
    @Option(help: "Clients, one room each (pagesyncd needs rooms <room-prefix>0 ... that wrap).") var clients = 20
    @Option(help: "Measured seconds.") var seconds = 3.0
    @Option(name: .customLong("warmup-ms"), help: "Unmeasured milliseconds before the measurement.") var warmupMs = 300
    @Option(name: .customLong("room-prefix"), help: "pagesyncd room names are this plus the client's index.") var roomPrefix = "r"
    @Option(help: "Label for the result rows (default: the target).") var label: String?
    @Option(help: "Append result rows to this TSV file.") var out: String?

    func validate() throws {
        guard target == .pagesyncd || target == .redis else { throw ValidationError("--target must be pagesyncd or redis") }
        guard clients >= 1 else { throw ValidationError("--clients must be at least 1") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
    }

    func run() throws {
        let sink = ResultSink(label: label ?? target.rawValue, path: out)
        let runner = try LoopRunner()
        defer { runner.shutdown() }
        let spread = ports.map { $0.split(separator: ",").compactMap { Int($0) } } ?? []
        let bench = LoopBound(DurableBench(loop: runner.loop, target: target, host: host, ports: spread.isEmpty ? [port] : spread, roomPrefix: roomPrefix))
        let count = clients
        let setupError: String? = runner.sync { done in bench.value.connect(count, done) }
        if let setupError {
            log("\(sink.label) durable, \(count) clients: \(setupError)")
            sink.add("durable_failed", n: count, 1)
            _ = runner.sync { (done: @escaping (Bool) -> Void) in bench.value.closeAll(); done(true) }
            throw ExitCode(1)
        }
        let warmup = UInt64(warmupMs) * 1_000_000
        let measured = UInt64(seconds * 1e9)
        let result: DurableBench.Result = runner.sync { done in bench.value.measure(warmupNs: warmup, measuredNs: measured, done) }
        _ = runner.sync { (done: @escaping (Bool) -> Void) in bench.value.closeAll(); done(true) }
        if let error = result.error { log("\(sink.label) durable, \(count) clients: \(error)") }
        let rate = Double(result.latencies.count) / seconds
        sink.add("durable_cps", n: count, rate)
        if let p = Percentiles(result.latencies) {
            sink.add("durable_p50_us", n: count, p.p50)
            sink.add("durable_p99_us", n: count, p.p99)
        }
        if result.errors > 0 { sink.add("durable_errors", n: count, Double(result.errors)) }
        log("\(sink.label) durable, \(count) clients: \(result.latencies.count) changes in \(fmt(seconds, 1)) s = \(fmt(rate, 0))/s, \(result.errors) errors")
    }
}

/// One closed-loop client: one room, at most one change in flight.
final class DurableClient {
    let index: Int
    var connection: TCPConnection?
    var splitter = LineSplitter()
    var joined = false
    var sentAt: UInt64 = 0
    var inFlight = false
    var sequence = 0

    init(index: Int) { self.index = index }
}

/// The loop-thread side of `durable`: connects the clients and runs the closed loops.
final class DurableBench {
    struct Result: Sendable {
        var latencies: [Double]
        var errors: Int
        var error: String?
    }

    let loop: EventLoop
    let target: Target
    let host: String
    /// Client i connects to `ports[i % ports.count]`.
    let ports: [Int]
    let roomPrefix: String
    private var clients: [DurableClient] = []
    /// pagesyncd's change: `NEXT` in a room that wraps.
    private static let next = CommandEncoder.bytes(.navigate(.next, ifVersion: nil))

    // Measurement state.
    private var running = false
    private var windowStart: UInt64 = 0
    private var windowEnd: UInt64 = 0
    private var latencies: [Double] = []
    private var errors = 0
    private var inFlight = 0
    private var finish: ((Result) -> Void)?
    private var failure: String?
    private var guardTimer: UV.Timer?

    init(loop: EventLoop, target: Target, host: String, ports: [Int], roomPrefix: String) {
        self.loop = loop
        self.target = target
        self.host = host
        self.ports = ports
        self.roomPrefix = roomPrefix
    }

    /// Connects `count` clients; pagesyncd clients each `JOIN` their room. Calls `done(nil)` once
    /// every client is ready, or with the first error.
    func connect(_ count: Int, _ done: @escaping (String?) -> Void) {
        var pending = count
        var reported = false
        func fail(_ message: String) { if !reported { reported = true; done(message) } }
        func ready() {
            pending -= 1
            if pending == 0 && !reported { reported = true; done(nil) }
        }
        for i in 0..<count {
            let client = DurableClient(index: i)
            clients.append(client)
            TCPConnection.connect(loop: loop, host: host, port: ports[i % ports.count]) { [unowned self] result in
                switch result {
                case .failure(let error): fail("client \(i) cannot connect: \(error)")
                case .success(let connection):
                    client.connection = connection
                    connection.setNoDelay(true)
                    connection.startReading { [unowned self, unowned client] event in
                        switch event {
                        case .data(let bytes):
                            let now = MonotonicClock.nanoseconds()
                            client.splitter.feed(bytes) { line in self.line(line, of: client, at: now, ready: ready, fail: fail) }
                        case .eof: self.closed(client, "closed by the server", fail: fail)
                        case .error(let error): self.closed(client, error.name, fail: fail)
                        }
                    }
                    if target == .redis { client.joined = true; ready() }
                }
            }
        }
    }

    private func closed(_ client: DurableClient, _ reason: String, fail: (String) -> Void) {
        client.connection?.close()
        client.connection = nil
        if !client.joined { fail("client \(client.index): \(reason)"); return }
        if running || client.inFlight {
            if failure == nil { failure = "client \(client.index): \(reason)" }
            if client.inFlight { client.inFlight = false; inFlight -= 1; settle() }
        }
    }

    private func line(_ line: UnsafeRawBufferPointer, of client: DurableClient, at now: UInt64,
                      ready: () -> Void, fail: (String) -> Void) {
        if !client.joined {
            // pagesyncd handshake: HELLO, then JOIN <room>.
            let reply = WireLineView(line)
            switch reply.kind {
            case .hello:
                client.connection?.write(CommandEncoder.bytes(.join("\(roomPrefix)\(client.index)")))
            case .ok where reply.firstPlainWord(is: "JOIN"):
                guard reply.yesNo("wrap") == true else { fail("room \(roomPrefix)\(client.index) does not wrap (start pagesyncd with --wrap)"); return }
                client.joined = true
                ready()
            case .error, .bye:
                fail("JOIN \(roomPrefix)\(client.index): \(line.string)")
            default:
                break
            }
            return
        }
        let isReply: Bool
        let isError: Bool
        switch target {
        case .pagesyncd:
            let kind = WireLineView(line).kind
            isReply = kind.isReply
            isError = kind == .error
        default:
            isReply = line.hasASCIIPrefix("+") || line.hasASCIIPrefix("-")
            isError = line.hasASCIIPrefix("-")
        }
        guard isReply, client.inFlight else { return }   // PAGE events of our own room
        client.inFlight = false
        inFlight -= 1
        if isError {
            errors += 1
            if errors <= 3 { log("client \(client.index) got: \(line.string)") }
        } else if now >= windowStart && now <= windowEnd {
            latencies.append(Double(now - client.sentAt) / 1000)
        }
        if running { send(client) } else { settle() }
    }

    private func send(_ client: DurableClient) {
        guard let connection = client.connection else { return }
        client.sequence += 1
        let bytes: [UInt8]
        if target == .pagesyncd {
            bytes = Self.next
        } else {
            let key = "room:\(client.index)", value = String(client.sequence)
            bytes = Array("*3\r\n$3\r\nSET\r\n$\(key.utf8.count)\r\n\(key)\r\n$\(value.utf8.count)\r\n\(value)\r\n".utf8)
        }
        client.inFlight = true
        inFlight += 1
        client.sentAt = MonotonicClock.nanoseconds()
        connection.write(bytes)
    }

    /// Runs every client's closed loop for warm-up plus the measured window, then lets the
    /// changes in flight finish. Counts (and times) the replies that arrive inside the window.
    func measure(warmupNs: UInt64, measuredNs: UInt64, _ done: @escaping (Result) -> Void) {
        let start = MonotonicClock.nanoseconds()
        windowStart = start + warmupNs
        windowEnd = windowStart + measuredNs
        latencies.reserveCapacity(1 << 16)
        running = true
        finish = done
        let stopTimer = UV.Timer(loop: loop)
        stopTimer.start(afterMilliseconds: (warmupNs + measuredNs) / 1_000_000, repeatMilliseconds: 0) { [unowned self] in
            stopTimer.close()
            running = false
            // A stalled server must not hang the bench: give the changes in flight 30 s.
            let guardTimer = UV.Timer(loop: loop)
            self.guardTimer = guardTimer
            guardTimer.start(afterMilliseconds: 30_000, repeatMilliseconds: 0) { [unowned self] in
                if failure == nil { failure = "\(inFlight) changes still unanswered 30 s after the end" }
                inFlight = 0
                settle()
            }
            settle()
        }
        for client in clients { send(client) }
    }

    private func settle() {
        guard !running, inFlight == 0, let finish else { return }
        self.finish = nil
        guardTimer?.close()
        guardTimer = nil
        finish(Result(latencies: latencies, errors: errors, error: failure))
    }

    /// Closes every client connection.
    func closeAll() {
        for client in clients {
            client.connection?.close()
            client.connection = nil
        }
        clients.removeAll()
    }
}
