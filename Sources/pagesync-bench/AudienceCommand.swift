import ArgumentParser
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench audience`: a presenter room of `--members` members, `--changers` of whom
/// change their view or hand (`VIEW BROWSE 2`, `HAND UP`, `VIEW FOLLOW`, `HAND DOWN`, in turn)
/// at `--rate` changes a second in all, from a thread of their own, while the presenter turns
/// pages (every `--turn-every` ms) and `--readers` members spread over the room time each turn. Quiet blocks (no view traffic)
/// and busy blocks alternate, `--block` seconds each, so that whatever else the machine does
/// falls on both alike.
struct AudienceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audience",
        abstract: "AUDIENCE events, page-turn fan-out under view changes, and memory per idle member (issue 39).",
        discussion: """
            Rows: audience_events_max_per_s (the most AUDIENCE events the presenter got in one \
            second, counted in whole seconds from the first), audience_events (all of them), \
            audience_min_gap_ms (the shortest time between two as they arrived), audience_inconsistent (events whose \
            following + browsing is not every member), audience_final_wrong (1 when the last event \
            after the traffic stopped does not match the members' last views and hands), \
            turn_p50_quiet_us, turn_p99_quiet_us / turn_p50_views_us, turn_p99_views_us (page turn \
            to each reader's PAGE, p50 and p99, in the quiet and the busy blocks), \
            turn_block_p99_quiet_us / turn_block_p99_views_us (the median of each block's p99: \
            a pause of the machine's that hits one block moves it little), view_changes_per_s (what the changers sent in the busy \
            blocks), and with --server-pid idle_member_bytes (the daemon's anonymous memory per \
            member, after a warm-up) and daemon_cpu_quiet_pct / daemon_cpu_views_pct (the \
            daemon's CPU time in each kind of block, in percent of one core). n = --members.
            """)

    @Option(help: "Target port (a pagesyncd whose first room needs --token).") var port: Int
    @Option(help: "The room's control token.") var token: String
    @Option(help: "Members besides the presenter (idle ones never read).") var members = 10_000
    @Option(help: "Members that change their view or hand.") var changers = 1000
    @Option(help: "Members that time each page turn (spread evenly over the room).") var readers = 100
    @Option(help: "Milliseconds between the end of one timed page turn and the next.") var turnEvery = 250
    @Option(help: "View and hand changes per second, all changers together.") var rate = 1000
    @Option(help: "Seconds of each kind of block in all (quiet, and with view traffic).") var seconds = 10.0
    @Option(help: "Seconds of one block; quiet and busy blocks alternate.") var block = 1.0
    @Option(name: .customLong("server-pid"), help: "The daemon's PID: measures its memory per idle member.") var serverPID: Int32?
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?

    func validate() throws {
        guard members >= readers + changers, readers > 0 else {
            throw ValidationError("--members must hold --readers (at least 1) and --changers")
        }
        guard seconds > 0, block > 0, rate >= 0 else { throw ValidationError("--seconds, --block must be above 0, --rate at least 0") }
    }

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        guard let presenter = BlockingSocket.connect(port: port) else { throw ValidationError("cannot connect to \(port)") }
        _ = BlockingSocket.sendAll(presenter, Array("AUTH \(token)\n".utf8))
        var before: Int?
        if let pid = serverPID {
            // A warm-up: what the first connections allocate once (code paths, tables) is not theirs.
            var warm: [Int32] = []
            for _ in 0..<200 { if let fd = BlockingSocket.connect(port: port) { warm.append(fd) } }
            usleep(500_000)
            for fd in warm { close(fd) }
            usleep(1_000_000)
            before = ProcessProbe.statusKiB(pid: pid, field: "RssAnon")
        }
        var sockets: [Int32] = []
        for _ in 0..<members {
            guard let fd = BlockingSocket.connect(port: port) else { throw ValidationError("connect failed after \(sockets.count) members") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            sockets.append(fd)
        }
        _ = fcntl(presenter, F_SETFL, fcntl(presenter, F_GETFL) | O_NONBLOCK)
        // Readers spread evenly over the room (the fan-out reaches members in the order they
        // came): their p99 is the whole fan-out's, not its first members'.
        let stride = members / readers
        let readerFDs = (0..<readers).map { sockets[$0 * stride] }
        let changerFDs = Array(sockets.enumerated().filter { $0.offset % stride != 0 }.map(\.element).prefix(changers))
        usleep(1_000_000)
        drain(readerFDs + changerFDs)
        if let pid = serverPID, let before, let after = ProcessProbe.statusKiB(pid: pid, field: "RssAnon") {
            sink.add("idle_member_bytes", n: members, Double(after - before) * 1024 / Double(members))
        }
        var events = AudienceLog()
        // What came while members connected (read in a burst now) is not timed.
        events.read(presenter)
        events.reset()
        let changer = ViewChanger(fds: changerFDs, rate: rate)
        var turns = TurnTimer(presenter: presenter, readers: readerFDs)
        var quiet: [Double] = [], busy: [Double] = []
        var quietBlocks: [Double] = [], busyBlocks: [Double] = []  // each block's p99
        let blocks = max(1, Int((seconds / block).rounded()))
        var busySeconds = 0.0
        var cpu = (quiet: 0.0, busy: 0.0)  // the daemon's CPU time in each kind of block, ms
        for index in 0..<(2 * blocks) {
            let views = index % 2 == 1
            changer.set(running: views)
            let end = MonotonicClock.nanoseconds() + UInt64(block * 1e9)
            var samples: [Double] = []
            let cpuBefore = serverPID.flatMap { ProcessProbe.cpuMilliseconds(pid: $0) }
            while MonotonicClock.nanoseconds() < end {
                samples += turns.turn(events: &events)
                turns.pause(milliseconds: turnEvery, events: &events)
            }
            if views { busy += samples } else { quiet += samples }
            if let cpuBefore, let cpuAfter = serverPID.flatMap({ ProcessProbe.cpuMilliseconds(pid: $0) }) {
                if views { cpu.busy += cpuAfter - cpuBefore } else { cpu.quiet += cpuAfter - cpuBefore }
            }
            if let p99 = Percentiles(samples)?.p99 { if views { busyBlocks.append(p99) } else { quietBlocks.append(p99) } }
            if views { busySeconds += block }
        }
        let final = changer.stop()
        usleep(600_000)
        events.read(presenter)
        sink.add("audience_events_max_per_s", n: members, Double(events.maxPerSecond()))
        sink.add("audience_events", n: members, Double(events.all.count))
        sink.add("audience_min_gap_ms", n: members, events.minimumGapMilliseconds())
        sink.add("audience_inconsistent", n: members, Double(events.all.filter { $0.following + $0.browsing != members }.count))
        let last = events.all.last
        sink.add("audience_final_wrong", n: members, last.map { $0.browsing == final.browsing && $0.hands == final.hands ? 0 : 1 } ?? 1)
        sink.add("turn_p50_quiet_us", n: members, Percentiles(quiet)?.p50 ?? 0)
        sink.add("turn_p50_views_us", n: members, Percentiles(busy)?.p50 ?? 0)
        sink.add("turn_p99_quiet_us", n: members, Percentiles(quiet)?.p99 ?? 0)
        sink.add("turn_p99_views_us", n: members, Percentiles(busy)?.p99 ?? 0)
        sink.add("turn_block_p99_quiet_us", n: members, median(quietBlocks) ?? 0)
        sink.add("turn_block_p99_views_us", n: members, median(busyBlocks) ?? 0)
        sink.add("view_changes_per_s", n: members, Double(final.sent) / max(busySeconds, 0.001))
        if serverPID != nil {
            sink.add("daemon_cpu_quiet_pct", n: members, cpu.quiet / 10 / (Double(blocks) * block))
            sink.add("daemon_cpu_views_pct", n: members, cpu.busy / 10 / (Double(blocks) * block))
        }
        for fd in sockets + [presenter] { close(fd) }
    }

    private func drain(_ fds: [Int32]) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        for fd in fds { while recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {} }
    }
}

/// The presenter's page turns, each timed at `readers` members: `GOTO` 2 and 1 in turn.
struct TurnTimer {
    let presenter: Int32
    let readers: [Int32]
    private var version = 0
    private var page = 2
    private var buffers: [[UInt8]]

    init(presenter: Int32, readers: [Int32]) {
        self.presenter = presenter
        self.readers = readers
        buffers = Array(repeating: [], count: readers.count)
    }

    /// Turns the page and waits (in `poll`, up to 2 s) until every reader has the new version's
    /// `PAGE`; microseconds from the send to each reader's arrival.
    mutating func turn(events: inout AudienceLog) -> [Double] {
        version += 1
        let sent = MonotonicClock.nanoseconds()
        _ = BlockingSocket.sendAll(presenter, Array("GOTO \(page)\n".utf8))
        page = page == 2 ? 1 : 2
        var pending = Set(readers.indices)
        var samples: [Double] = []
        let deadline = sent + 2_000_000_000
        let needle = Array(" version=\(version) ".utf8)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !pending.isEmpty, MonotonicClock.nanoseconds() < deadline {
            var polled = pending.map { pollfd(fd: readers[$0], events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            let now = MonotonicClock.nanoseconds()
            for (i, p) in zip(pending, polled) where p.revents != 0 {
                let n = recv(readers[i], &chunk, chunk.count, Int32(MSG_DONTWAIT))
                guard n > 0 else { continue }
                buffers[i] += chunk[..<n]
                if buffers[i].firstRange(of: needle) != nil {
                    samples.append(Double(now - sent) / 1000)
                    pending.remove(i)
                    buffers[i] = []
                } else if buffers[i].count > 1 << 16 {
                    buffers[i].removeFirst(buffers[i].count - 256)
                }
            }
        }
        events.read(presenter)
        return samples
    }

    /// Waits `milliseconds`, reading the presenter's events as they come.
    func pause(milliseconds: Int, events: inout AudienceLog) {
        let end = MonotonicClock.nanoseconds() + UInt64(milliseconds) * 1_000_000
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < end else { return }
            var p = pollfd(fd: presenter, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32(max(1, (end - now) / 1_000_000)))
            events.read(presenter)
        }
    }
}
