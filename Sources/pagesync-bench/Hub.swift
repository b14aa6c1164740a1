import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// The coordinator's loop-thread state: the worker links, the driver and the pinger.
final class Hub {
    let loop: EventLoop
    let target: Target
    let host: String
    let port: Int
    let payload: Payload
    var listener: TCPListener?
    var workers: [Link] = []
    var driver: Link?
    /// pagesyncd: the room's page as the driver last knew it (alternation NEXT/PREV), or its
    /// line with ``lineChanges`` (alternation LINE 2 / LINE 1).
    var driverPage = 1
    /// pagesyncd: the driver scrolls (`LINE`) instead of turning pages (interleave's `change=line`).
    var lineChanges = false
    var driverErrors = 0
    var observedEventBytes = 0

    init(loop: EventLoop, target: Target, host: String, port: Int, payload: Payload) {
        self.loop = loop
        self.target = target
        self.host = host
        self.port = port
        self.payload = payload
    }

    // MARK: Workers

    /// Listens for worker control connections on a free loopback port; returns the port.
    func listen(expecting count: Int, ready: @escaping () -> Void) throws(UVError) -> Int {
        let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
        try listener.listen { [unowned self] connection in
            let link = Link(connection)
            link.onLine = { [unowned self, unowned link] line, _ in
                guard line.hasASCIIPrefix("WORKER ") else { return }
                link.onLine = nil
                workers.append(link)
                if workers.count == count {
                    self.listener?.close()
                    self.listener = nil
                    ready()
                }
            }
        }
        self.listener = listener
        return listener.localAddress?.port ?? 0
    }

    /// Sends `line` to every worker in `links` and collects each one's first reply starting
    /// with `prefix`.
    func request(_ links: [Link], _ lines: [String], expect prefix: String, _ done: @escaping ([String]) -> Void) {
        var replies = [String?](repeating: nil, count: links.count)
        var remaining = links.count
        if remaining == 0 { done([]); return }
        for (i, link) in links.enumerated() {
            link.onLine = { line, _ in
                let text = line.string
                guard text.hasPrefix(prefix), replies[i] == nil else { return }
                replies[i] = text
                remaining -= 1
                if remaining == 0 { done(replies.map { $0! }) }
            }
            link.send(lines[i])
        }
    }

    // MARK: Driver

    /// Connects the driver and prepares it: pagesyncd gets a NAME sized so its PAGE events are
    /// `payload.size` bytes, then `GOTO 1`; NATS gets CONNECT.
    func connectDriver(_ done: @escaping (String?) -> Void) {
        Link.connect(loop: loop, host: host, port: port) { [unowned self] result in
            switch result {
            case .failure(let error):
                done("driver cannot connect: \(error)")
            case .success(let link):
                driver = link
                link.onClosed = { reason in log("driver connection closed: \(reason)") }
                switch target {
                case .pagesyncd: preparePagesyncDriver(link, done)
                case .nats:
                    link.write(target.clientHello)
                    link.onLine = { [unowned self] line, _ in driverIdle(line) }
                    done(nil)
                case .redis, .floor:
                    link.onLine = { [unowned self] line, _ in driverIdle(line) }
                    done(nil)
                }
            }
        }
    }

    private func preparePagesyncDriver(_ link: Link, _ done: @escaping (String?) -> Void) {
        var step = 0
        link.onLine = { [unowned self] raw, _ in
            let line = WireLine(WireLineView(raw))
            switch step {
            case 0:
                guard let hello = line, hello.kind == .hello else { done("expected HELLO, got: \(raw.string)"); return }
                let pages = hello.int("pages") ?? 0
                guard pages >= 2 else { done("the room needs 2+ pages, has \(pages)"); return }
                // The room's PAGE line with an empty name and a 4-digit version: the driver's name
                // makes up the rest of the payload.
                let state = RoomState(page: .first, pageCount: pages, version: 1000, by: "", doc: hello.fields["doc"] ?? "",
                                      epoch: hello.fields["epoch"].flatMap { Epoch(hex: $0) } ?? Epoch(0))
                let fixed = Wire.event(room: hello.fields["room"] ?? "", state).count
                let nameLength = min(32, max(1, payload.size - fixed))
                let name = String("bench-driver-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx".prefix(nameLength))
                step = 1
                link.send(.name(name))
            case 1:
                guard line?.kind == .ok else { done("NAME failed: \(raw.string)"); return }
                step = 2
                link.send(.navigate(.goto(.first), ifVersion: nil))
            case 2:
                if line?.kind == .page { return }
                guard line?.kind == .ok else { done("GOTO 1 failed: \(raw.string)"); return }
                driverPage = 1
                link.onLine = { [unowned self] line, _ in driverIdle(line) }
                done(nil)
            default: break
            }
        }
    }

    /// What the driver does with lines while changes run: note errors and the PAGE line size.
    private func driverIdle(_ line: UnsafeRawBufferPointer) {
        if target == .pagesyncd && WireLineView(line).kind == .page {
            observedEventBytes = line.count + 1
        } else if target.isRefusal(line) {
            driverErrors += 1
            if driverErrors <= 3 { log("driver got: \(line.string)") }
        } else if target.isServerPing(line) {
            driver?.write(Array("PONG\r\n".utf8))
        }
    }

    /// The base version for a phase: pagesyncd's current version (STATUS), 0 for the others.
    func phaseBase(_ done: @escaping (Int) -> Void) {
        guard target == .pagesyncd, let driver else { done(0); return }
        driver.onLine = { [unowned self, unowned driver] raw, _ in
            let reply = WireLineView(raw)
            guard reply.kind == .ok, reply.field("room") != nil else { driverIdle(raw); return }  // STATUS's
            driverPage = reply.int("page") ?? 1
            driver.onLine = { [unowned self] line, _ in driverIdle(line) }
            done(reply.int("version") ?? 0)
        }
        driver.send(.status)
    }

    /// pagesyncd's changes: the driver's room has 2 pages and alternates between them.
    private static let next = CommandEncoder.bytes(.navigate(.next, ifVersion: nil))
    private static let previous = CommandEncoder.bytes(.navigate(.previous, ifVersion: nil))
    private static let lineTwo = CommandEncoder.bytes(.line(2, ifVersion: nil))
    private static let lineOne = CommandEncoder.bytes(.line(1, ifVersion: nil))

    /// The bytes that make change `seq` happen.
    func change(_ seq: Int) -> [UInt8] {
        guard target == .pagesyncd else { return payload.publish(seq: seq, on: target) }
        if driverPage == 1 {
            driverPage = 2
            return lineChanges ? Self.lineTwo : Self.next
        } else {
            driverPage = 1
            return lineChanges ? Self.lineOne : Self.previous
        }
    }

    // MARK: Phases

    /// Fan-out latency: one change at a time; the next change goes out once every worker has
    /// reported that all of its followers have the current one. Returns microseconds per change
    /// until the last follower has it, and until the first one has it.
    func latency(_ links: [Link], changes: Int, stallMs: Int, _ done: @escaping ([Double], [Double], String?) -> Void) {
        guard driver != nil else { done([], [], "no driver"); return }
        LatencyProbe.rounds([LatencyProbe(hub: self, links: links, changes: changes)], labels: [""], loop: loop,
                            stallMs: stallMs) { last, first, error in done(last[0], first[0], error) }
    }

    /// Fan-out throughput: all changes back to back; returns (deliveries, seconds, lost, error).
    func throughput(_ links: [Link], changes: Int, stallMs: Int, _ done: @escaping (Int, Double, Int, String?) -> Void) {
        guard let driver else { done(0, 0, 0, "no driver"); return }
        var bytes: [UInt8] = []
        for seq in 1...changes { bytes += change(seq) }
        collectThroughput(links, stallMs: stallMs, stalled: { "timed out after \(stallMs) ms" }, done)
        driver.write(bytes)
    }

    /// Paced throughput: the driver sends change i+1 as soon as the server acknowledged change i
    /// (pagesyncd's reply, redis `:n`, NATS/floor `PONG` after the change), so every change is
    /// fanned out on its own; ends when every follower has the last change. Returns (deliveries,
    /// seconds, lost, error).
    func paced(_ links: [Link], changes: Int, stallMs: Int, _ done: @escaping (Int, Double, Int, String?) -> Void) {
        guard let driver else { done(0, 0, 0, "no driver"); return }
        let target = self.target
        var sent = 0
        let ack: [UInt8] = target == .nats ? Array("PING\r\n".utf8) : target == .floor ? Array("PING\n".utf8) : []
        func sendNext() {
            guard sent < changes else { return }
            sent += 1
            driver.write(change(sent) + ack)
        }
        collectThroughput(links, stallMs: stallMs, stalled: { "timed out after \(stallMs) ms (\(sent) of \(changes) changes sent)" }) {
            [unowned self] delivered, seconds, lost, error in
            driver.onLine = { [unowned self] line, _ in driverIdle(line) }
            done(delivered, seconds, lost, error)
        }
        driver.onLine = { [unowned self] line, _ in
            let acknowledged: Bool
            switch target {
            case .pagesyncd: acknowledged = WireLineView(line).kind.isReply  // the driver sends only NEXT and PREV, or LINE
            case .redis: acknowledged = line.hasASCIIPrefix(":")
            case .nats, .floor: acknowledged = line.hasASCIIPrefix("PONG")
            }
            if acknowledged { sendNext() } else { driverIdle(line) }
        }
        sendNext()
    }

    /// The end of a throughput phase: takes over the line handlers of `links` (workers armed with
    /// `ARM <base> <changes> T`) until each has reported `T <ns> <delivered> <lost>`, or `stallMs`
    /// passed (the error is then `stalled()`), then hands them back (cleared) and calls `done`
    /// with the deliveries, the seconds from now until the last follower had the last change,
    /// the followers lost, and the error.
    private func collectThroughput(_ links: [Link], stallMs: Int, stalled: @escaping () -> String,
                                   _ done: @escaping (Int, Double, Int, String?) -> Void) {
        var remaining = links.count
        var delivered = 0
        var lost = 0
        var last: UInt64 = 0
        let start = MonotonicClock.nanoseconds()
        let watchdog = UV.Timer(loop: loop)
        var finished = false
        func finish(_ error: String?) {
            guard !finished else { return }
            finished = true
            watchdog.close()
            for link in links { link.onLine = nil }
            done(delivered, last > start ? Double(last - start) / 1e9 : 0, lost, error)
        }
        for link in links {
            link.onLine = { line, _ in
                guard line.hasASCIIPrefix("T ") else { return }
                let words = line.string.split(separator: " ")
                guard words.count == 4, let t = UInt64(words[1]), let d = Int(words[2]), let l = Int(words[3]) else { return }
                delivered += d
                lost += l
                last = max(last, t)
                remaining -= 1
                if remaining == 0 { finish(nil) }
            }
        }
        watchdog.start(afterMilliseconds: UInt64(stallMs), repeatMilliseconds: 0) { finish(stalled()) }
    }

    /// Round trip: `count` sequential pings on a fresh connection (one warm-up ping first).
    /// Returns microseconds per ping.
    func roundTrips(count: Int, _ done: @escaping ([Double], String?) -> Void) {
        Link.connect(loop: loop, host: host, port: port) { [unowned self] result in
            guard case .success(let link) = result else { done([], "pinger cannot connect"); return }
            var results: [Double] = []
            results.reserveCapacity(count)
            var sent: UInt64 = 0
            var warm = false
            let ping = target.ping
            let target = self.target
            link.onClosed = { reason in done(results, "pinger closed: \(reason)") }
            link.onLine = { [unowned link] line, now in
                if target.isServerPing(line) { link.write(Array("PONG\r\n".utf8)); return }
                guard target.isPong(line) else { return }
                if warm { results.append(Double(now - sent) / 1000) } else { warm = true }
                if results.count == count {
                    link.onClosed = nil
                    link.onLine = nil
                    link.connection.close()
                    done(results, nil)
                    return
                }
                sent = MonotonicClock.nanoseconds()
                link.write(ping)
            }
            sent = MonotonicClock.nanoseconds()
            link.write(target.clientHello + ping)
        }
    }
}
