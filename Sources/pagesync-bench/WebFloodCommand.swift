import ArgumentParser
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench webflood`: a TCP member's `PING` round trips while WebSocket members flood
/// the daemon's web listener with commands (each keeps `--in-flight` `PING` messages
/// outstanding, sending one more for every answer), in 1 s blocks alternating with quiet ones,
/// so that whatever else the machine does falls on both alike. The flooders' thread runs at
/// nice 19: they stand for other machines, not for a load on the probe's CPU.
struct WebFloodCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webflood",
        abstract: "A TCP member's PING round trip while WebSocket members flood the daemon (issue 42).",
        discussion: """
            Rows (n = --flooders): flood_ping_p99_quiet_us and flood_ping_p99_us (the TCP member's \
            PING p99 in the quiet and the flood blocks, pooled), flood_ping_block_p99_quiet_us and \
            flood_ping_block_p99_us (the median of the blocks' p99s), flood_messages_per_s (the \
            WebSocket commands the daemon answered a second in the flood blocks), flood_lost (flooders \
            the daemon closed or that failed).
            """)

    @Option(help: "The daemon's TCP port (the probing member).") var port: Int
    @Option(name: .customLong("web-port"), help: "The daemon's --web-listen port.") var webPort: Int
    @Option(help: "WebSocket members that flood.") var flooders = 16
    @Option(name: .customLong("in-flight"), help: "PING messages each flooder keeps outstanding.") var inFlight = 64
    @Option(help: "Seconds of each kind of block in all (quiet, and flooding).") var seconds = 10.0
    @Option(help: "Seconds of one block; quiet and flood blocks alternate.") var block = 1.0
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?

    /// The calling thread's id (Glibc's module exports neither `gettid` nor `syscall`): the
    /// last part of `/proc/thread-self`, a link to `<pid>/task/<tid>`; 0 (the process) if unread.
    private static func threadID() -> id_t {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return 0 }
        let link = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return link.split(separator: "/").last.flatMap { id_t($0) } ?? 0
    }

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        var probe = try LineProbe(port: port)
        let runner = try LoopRunner()
        // The flooders stand for other machines: on this one their loop runs at the lowest
        // priority, so that the probe's own wait for a CPU is not the flood's doing.
        let _: Bool = runner.sync { done in done(setpriority(__priority_which_t(PRIO_PROCESS.rawValue), Self.threadID(), 19) == 0) }
        let (webPort, flooders, inFlight) = (self.webPort, self.flooders, self.inFlight)
        let flood: LoopBound<Flood> = runner.sync { done in
            let flood = Flood(loop: runner.loop, port: webPort, members: flooders, inFlight: inFlight)
            flood.connect { done(LoopBound(flood)) }
        }
        let connected: Int = runner.sync { done in done(flood.value.connected) }
        guard connected == flooders else {
            log("webflood: \(connected) of \(flooders) WebSocket members connected")
            throw ExitCode(1)
        }
        var quiet: [Double] = [], busy: [Double] = []
        var quietBlocks: [Double] = [], busyBlocks: [Double] = []
        var answered = 0
        let blocks = max(1, Int((seconds / block).rounded()))
        for index in 0..<(2 * blocks) {
            let flooding = index % 2 == 1
            let before: Int = runner.sync { done in
                flood.value.set(running: flooding)
                done(flood.value.answered)
            }
            var samples: [Double] = []
            let end = MonotonicClock.nanoseconds() + UInt64(block * 1e9)
            while MonotonicClock.nanoseconds() < end {
                guard let time = probe.roundTrip(MonitoringCommand.ping) else { throw ExitCode(1) }
                samples.append(time)
                usleep(500)
            }
            let after: Int = runner.sync { done in done(flood.value.answered) }
            if flooding { answered += after - before; busy += samples } else { quiet += samples }
            if let p99 = Percentiles(samples)?.p99 { if flooding { busyBlocks.append(p99) } else { quietBlocks.append(p99) } }
        }
        let lost: Int = runner.sync { done in
            flood.value.set(running: false)
            done(flood.value.lost)
        }
        sink.add("flood_ping_p99_quiet_us", n: flooders, Percentiles(quiet)?.p99 ?? 0)
        sink.add("flood_ping_p99_us", n: flooders, Percentiles(busy)?.p99 ?? 0)
        sink.add("flood_ping_block_p99_quiet_us", n: flooders, median(quietBlocks) ?? 0)
        sink.add("flood_ping_block_p99_us", n: flooders, median(busyBlocks) ?? 0)
        sink.add("flood_messages_per_s", n: flooders, Double(answered) / (Double(blocks) * block))
        sink.add("flood_lost", n: flooders, Double(lost))
        runner.shutdown()
    }
}

/// The flooding WebSocket members, on the bench's loop: each keeps `inFlight` `PING` messages
/// outstanding while running (one more for every answer) and lets them drain when paused.
final class Flood {
    let loop: EventLoop
    let port: Int
    let members: Int
    let inFlight: Int
    private var sockets: [WebSocketConnection] = []
    private var outstanding: [Int] = []
    private var running = false
    /// WebSocket members connected (their greeting read).
    private(set) var connected = 0
    /// Answers read so far, every member together.
    private(set) var answered = 0
    /// Members that failed to connect or were closed.
    private(set) var lost = 0
    private static let ping = CommandEncoder.bytes(.ping(nil))

    init(loop: EventLoop, port: Int, members: Int, inFlight: Int) {
        self.loop = loop
        self.port = port
        self.members = members
        self.inFlight = inFlight
    }

    /// Connects every member; `done` once each has its greeting or failed.
    func connect(_ done: @escaping () -> Void) {
        var pending = members
        func finished() { pending -= 1; if pending == 0 { done() } }
        for _ in 0..<members {
            WebSocketClient.connect(loop: loop, host: "127.0.0.1", port: port, path: "/ws") { [self] result in
                guard case .success(let socket) = result else { lost += 1; return finished() }
                let index = sockets.count
                sockets.append(socket)
                outstanding.append(0)
                var greeted = false
                socket.startReading { [self] event in
                    guard case .data(let bytes) = event else { lost += 1; return }
                    var lines = bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                    if !greeted, lines > 0 {
                        greeted = true
                        lines -= 1
                        connected += 1
                        finished()
                    }
                    answered += lines
                    outstanding[index] -= lines
                    if running { top(index) }
                }
            }
        }
    }

    /// Starts (`true`) or pauses the flood.
    func set(running: Bool) {
        self.running = running
        if running { for index in sockets.indices { top(index) } }
    }

    private func top(_ index: Int) {
        let more = inFlight - outstanding[index]
        guard more > 0, !sockets[index].isClosed else { return }
        sockets[index].write(Array(repeating: Self.ping, count: more).flatMap { $0 })
        outstanding[index] += more
    }
}
