import ArgumentParser
import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench audience`: a presenter room of `--members` members, `--changers` of whom
/// toggle their view (`VIEW BROWSE 2` / `VIEW FOLLOW`) at `--rate` changes a second in all, while
/// the presenter turns pages every 100 ms and `--readers` members time each turn. The same
/// turns run first without the view traffic, then with it, on the same connections.
struct AudienceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audience",
        abstract: "AUDIENCE events and page-turn fan-out under view changes (issue 39).",
        discussion: """
            Rows: audience_events_max_per_s (the most AUDIENCE events the presenter got in one \
            second, counted in whole seconds from the first), audience_events (all of them), \
            audience_min_gap_ms (the shortest time between two as they arrived), audience_inconsistent (events whose \
            following + browsing is not every member), audience_final_wrong (1 when the last event \
            after the traffic stopped does not match the members' last views), and \
            turn_p99_quiet_us / turn_p99_views_us (page turn to each reader's PAGE, p99, without \
            and with the view traffic). n = --members.
            """)

    @Option(help: "Target port (a pagesyncd whose first room needs --token).") var port: Int
    @Option(help: "The room's control token.") var token: String
    @Option(help: "Members besides the presenter (idle ones never read).") var members = 10_000
    @Option(help: "Members that change their view.") var changers = 1000
    @Option(help: "Members that time each page turn.") var readers = 100
    @Option(help: "View changes per second, all changers together.") var rate = 1000
    @Option(help: "Seconds of each phase (quiet, then with view traffic).") var seconds = 5.0
    @Option(help: "Label for the result rows.") var label = "pagesyncd"
    @Option(help: "Append result rows to this TSV file.") var out: String?

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        guard let presenter = BlockingSocket.connect(port: port) else { throw ValidationError("cannot connect to \(port)") }
        _ = BlockingSocket.sendAll(presenter, Array("AUTH \(token)\n".utf8))
        var sockets: [Int32] = []
        for _ in 0..<members {
            guard let fd = BlockingSocket.connect(port: port) else { throw ValidationError("connect failed after \(sockets.count) members") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            sockets.append(fd)
        }
        _ = fcntl(presenter, F_SETFL, fcntl(presenter, F_GETFL) | O_NONBLOCK)
        let readerFDs = Array(sockets.prefix(readers))
        let changerFDs = Array(sockets.dropFirst(readers).prefix(changers))
        var events = AudienceLog()
        var browsing = Array(repeating: false, count: changerFDs.count)
        usleep(1_000_000)
        drain(readerFDs + changerFDs)
        // What came while members connected (read in a burst now) is not timed.
        events.read(presenter)
        events.reset()
        var version = 0
        var turnPage = 2
        func phase(views: Bool) -> [Double] {
            var samples: [Double] = []
            let start = MonotonicClock.nanoseconds()
            let end = start + UInt64(seconds * 1e9)
            var nextTurn = start
            var nextChange = start
            let changeEvery = UInt64(1e9 / Double(max(1, rate)))
            var changer = 0
            while MonotonicClock.nanoseconds() < end {
                let now = MonotonicClock.nanoseconds()
                if views, !changerFDs.isEmpty, now >= nextChange {
                    browsing[changer].toggle()
                    _ = BlockingSocket.sendAll(changerFDs[changer], Array((browsing[changer] ? "VIEW BROWSE 2\n" : "VIEW FOLLOW\n").utf8))
                    changer = (changer + 1) % changerFDs.count
                    nextChange += changeEvery
                }
                if now >= nextTurn {
                    version += 1
                    _ = BlockingSocket.sendAll(presenter, Array("GOTO \(turnPage)\n".utf8))
                    turnPage = turnPage == 2 ? 1 : 2
                    samples += timeTurn(readerFDs, version: version, sent: now, presenter: presenter, events: &events)
                    nextTurn = now + 100_000_000
                }
                events.read(presenter)
                if views { drain(changerFDs) }
            }
            return samples
        }
        let quiet = phase(views: false)
        let busy = phase(views: true)
        usleep(600_000)
        events.read(presenter)
        let expectBrowsing = browsing.filter { $0 }.count
        sink.add("audience_events_max_per_s", n: members, Double(events.maxPerSecond()))
        sink.add("audience_events", n: members, Double(events.all.count))
        sink.add("audience_min_gap_ms", n: members, events.minimumGapMilliseconds())
        sink.add("audience_inconsistent", n: members, Double(events.all.filter { $0.following + $0.browsing != members }.count))
        sink.add("audience_final_wrong", n: members, events.all.last.map { $0.browsing == expectBrowsing ? 0 : 1 } ?? 1)
        sink.add("turn_p99_quiet_us", n: members, Percentiles(quiet)?.p99 ?? 0)
        sink.add("turn_p99_views_us", n: members, Percentiles(busy)?.p99 ?? 0)
        for fd in sockets + [presenter] { close(fd) }
    }

    /// Waits until every reader has the `PAGE` of `version` (or 2 s); microseconds after `sent`.
    private func timeTurn(_ readers: [Int32], version: Int, sent: UInt64, presenter: Int32, events: inout AudienceLog) -> [Double] {
        var pending = Set(readers.indices)
        var buffers = Array(repeating: [UInt8](), count: readers.count)
        var samples: [Double] = []
        let deadline = sent + 2_000_000_000
        let needle = Array(" version=\(version) ".utf8)
        while !pending.isEmpty, MonotonicClock.nanoseconds() < deadline {
            for i in pending {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = recv(readers[i], &chunk, chunk.count, Int32(MSG_DONTWAIT))
                guard n > 0 else { continue }
                buffers[i] += chunk[..<n]
                if buffers[i].firstRange(of: needle) != nil {
                    samples.append(Double(MonotonicClock.nanoseconds() - sent) / 1000)
                    pending.remove(i)
                    buffers[i] = []
                } else if buffers[i].count > 1 << 16 {
                    buffers[i].removeFirst(buffers[i].count - 256)
                }
            }
            events.read(presenter)
        }
        return samples
    }

    private func drain(_ fds: [Int32]) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        for fd in fds { while recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {} }
    }
}

/// The presenter's `AUDIENCE` events as they arrive.
struct AudienceLog {
    struct Event { var at: UInt64; var following: Int; var browsing: Int }
    private(set) var all: [Event] = []
    private var partial: [UInt8] = []

    /// Forgets the events so far.
    mutating func reset() { all = [] }

    mutating func read(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { return }
            partial += chunk[..<n]
            while let lf = partial.firstIndex(of: 0x0A) {
                let line = String(decoding: partial[..<lf], as: UTF8.self)
                partial.removeSubrange(...lf)
                guard line.hasPrefix("AUDIENCE "), let parsed = WireLine(parsing: line),
                      let f = parsed.int("following"), let b = parsed.int("browsing") else { continue }
                all.append(Event(at: MonotonicClock.nanoseconds(), following: f, browsing: b))
            }
        }
    }

    /// The most events in one second, counted in whole seconds from the first event.
    func maxPerSecond() -> Int {
        guard let first = all.first?.at else { return 0 }
        var buckets: [UInt64: Int] = [:]
        for event in all { buckets[(event.at - first) / 1_000_000_000, default: 0] += 1 }
        return buckets.values.max() ?? 0
    }

    /// The shortest time between two events as they arrived, in milliseconds.
    func minimumGapMilliseconds() -> Double {
        zip(all, all.dropFirst()).map { Double($1.at - $0.at) / 1e6 }.min() ?? 0
    }
}
