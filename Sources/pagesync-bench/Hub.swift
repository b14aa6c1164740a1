import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// Runs an `EventLoop` on a thread of its own so that the coordinator's script can be written
/// as plain sequential code on the main thread: `sync` hands a step to the loop thread and
/// blocks until that step calls its completion.
final class LoopRunner: @unchecked Sendable {
    let loop: EventLoop
    private var thread = pthread_t()

    init() throws(UVError) {
        loop = try EventLoop()
        let context = Unmanaged.passRetained(LoopBoundBox(loop)).toOpaque()
        pthread_create(&thread, nil, { argument in
            let box = Unmanaged<LoopBoundBox>.fromOpaque(argument!).takeRetainedValue()
            box.value.run()
            box.value.closeAllHandlesAndDrain()
            return nil
        }, context)
    }

    /// Runs `body` on the loop thread and waits until it calls its completion with a value.
    func sync<T: Sendable>(_ body: @escaping (@escaping (T) -> Void) -> Void) -> T {
        let handoff = Handoff<T>()
        let box = LoopBound(body)
        loop.execute { box.value { handoff.put($0) } }
        return handoff.take()
    }

    /// Stops the loop, closes its handles and joins the thread.
    func shutdown() {
        let loop = self.loop
        loop.execute { loop.stop() }
        pthread_join(thread, nil)
    }
}

/// Heap box so the loop can cross the pthread_create boundary.
final class LoopBoundBox: @unchecked Sendable {
    let value: EventLoop
    init(_ value: EventLoop) { self.value = value }
}

/// A line-oriented connection of the coordinator (to a worker, or the driver/pinger to the
/// target). Every complete line is handed to `onLine` with its receipt time.
final class Link {
    let connection: TCPConnection
    private var splitter = LineSplitter()
    /// The current line handler; replaced per phase.
    var onLine: ((UnsafeRawBufferPointer, UInt64) -> Void)?
    /// Called once when the peer closes or the connection fails.
    var onClosed: ((String) -> Void)?
    private(set) var closed = false

    init(_ connection: TCPConnection) {
        self.connection = connection
        connection.setNoDelay(true)
        // The read callback keeps the link alive until the connection is closed (closing drops it).
        connection.startReading { [self] event in
            switch event {
            case .data(let bytes):
                let now = MonotonicClock.nanoseconds()
                splitter.feed(bytes) { line in onLine?(line, now) }
            case .eof: close(reason: "eof")
            case .error(let error): close(reason: error.name)
            }
        }
    }

    private func close(reason: String) {
        guard !closed else { return }
        closed = true
        connection.close()
        onClosed?(reason)
    }

    /// Writes raw bytes.
    func write(_ bytes: [UInt8]) { connection.write(bytes) }
    /// Writes a text line (LF appended): the bench's own control lines to and from workers.
    func send(_ line: String) { connection.write(Array((line + "\n").utf8)) }
    /// Writes a pagesync command.
    func send(_ command: Command) { connection.write(CommandEncoder.bytes(command)) }

    /// Connects and wraps the connection.
    static func connect(loop: EventLoop, host: String, port: Int, _ done: @escaping (Result<Link, UVError>) -> Void) {
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            done(result.map { Link($0) })
        }
    }
}

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
    /// pagesyncd: the room's page as the driver last knew it (alternation NEXT/PREV).
    var driverPage = 1
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

    /// The bytes that make change `seq` happen.
    func change(_ seq: Int) -> [UInt8] {
        guard target == .pagesyncd else { return payload.publish(seq: seq, on: target) }
        if driverPage == 1 {
            driverPage = 2
            return Self.next
        } else {
            driverPage = 1
            return Self.previous
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
            case .pagesyncd: acknowledged = WireLineView(line).kind.isReply  // the driver sends only NEXT and PREV
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

/// One latency phase of one hub, a change at a time: `send(seq, reached)` makes change `seq`
/// through the hub's driver and calls `reached` once every worker in `links` has reported
/// (`R <seq> <last-ns> <first-ns>`) that all of its followers have it, with the microseconds
/// from the send until the last and until the first follower had it. `Hub.latency` sends one
/// hub's changes back to back; `interleave` takes turns over several hubs' probes on one loop.
/// The probe owns its links' line handlers until `stop()`.
final class LatencyProbe {
    private let hub: Hub
    private let links: [Link]
    let changes: Int
    private var sendTimes: [UInt64]
    private var lastTimes: [UInt64]
    private var firstTimes: [UInt64]
    private var reported: [Int]
    /// The change in flight and what to call when every follower has it.
    private var current = 0
    private var reached: ((Double, Double) -> Void)?
    /// When the latest change went out (for stall watchdogs).
    private(set) var lastSend: UInt64 = MonotonicClock.nanoseconds()

    /// Takes over the line handlers of `links` (the hub's workers that hold followers, already
    /// sent `ARM <base> <changes> L`).
    init(hub: Hub, links: [Link], changes: Int) {
        self.hub = hub
        self.links = links
        self.changes = changes
        sendTimes = [UInt64](repeating: 0, count: changes + 1)
        lastTimes = sendTimes
        firstTimes = sendTimes
        reported = [Int](repeating: 0, count: changes + 1)
        for link in links {
            link.onLine = { [unowned self] line, _ in report(line) }
        }
    }

    /// Sends change `seq` (1...changes, in order) and calls `reached(lastUs, firstUs)` once every
    /// worker has reported it. A change every worker reported before it was sent (a worker that
    /// lost all of its followers reports every change at once) is reached at once.
    func send(_ seq: Int, _ reached: @escaping (Double, Double) -> Void) {
        let bytes = hub.change(seq)
        current = seq
        self.reached = reached
        lastSend = MonotonicClock.nanoseconds()
        sendTimes[seq] = lastSend
        hub.driver?.write(bytes)
        if reported[seq] >= links.count { complete(seq) }
    }

    /// Hands the links' line handlers back (they are cleared) and drops a pending callback.
    func stop() {
        for link in links { link.onLine = nil }
        reached = nil
    }

    private func report(_ line: UnsafeRawBufferPointer) {
        guard line.hasASCIIPrefix("R ") else { return }
        let words = line.string.split(separator: " ")
        guard words.count >= 3, let seq = Int(words[1]), let t = UInt64(words[2]), seq >= 1, seq <= changes else { return }
        reported[seq] += 1
        if t > lastTimes[seq] { lastTimes[seq] = t }
        if words.count >= 4, let first = UInt64(words[3]), first > 0,
           firstTimes[seq] == 0 || first < firstTimes[seq] { firstTimes[seq] = first }
        if reported[seq] == links.count && seq == current { complete(seq) }
    }

    private func complete(_ seq: Int) {
        guard let reached else { return }
        self.reached = nil
        let sent = sendTimes[seq], last = lastTimes[seq], first = firstTimes[seq]
        reached(last > sent ? Double(last - sent) / 1000 : 0, first > sent ? Double(first - sent) / 1000 : 0)
    }
}

extension LatencyProbe {
    /// The order of round `round` (1-based) over `count` targets: every target once, starting
    /// with the ((round - 1) mod count)-th, so each goes first (and last) equally often.
    static func order(round: Int, count: Int) -> [Int] {
        (0..<count).map { (round - 1 + $0) % count }
    }

    /// On the loop thread: the fan-out latency of one target (`run`) or of several in the
    /// same rounds (`interleave`). `probes[i].changes` rounds; round r sends change r through every
    /// probe in `order(round: r, ...)`, each once the previous probe's followers all have
    /// theirs. Returns, per probe, the microseconds of each change until the last and until the
    /// first follower had it, and an error when a change stalled for `stallMs`.
    static func rounds(_ probes: [LatencyProbe], labels: [String], loop: EventLoop, stallMs: Int,
                       _ done: @escaping ([[Double]], [[Double]], String?) -> Void) {
        let rounds = probes.map(\.changes).min() ?? 0
        var last = [[Double]](repeating: [], count: probes.count)
        var first = last
        guard rounds > 0 else { done(last, first, nil); return }
        let watchdog = UV.Timer(loop: loop)
        var finished = false
        var inFlight = 0  // the probe whose change is out
        func finish(_ error: String?) {
            guard !finished else { return }
            finished = true
            watchdog.close()
            for probe in probes { probe.stop() }
            done(last, first, error)
        }
        func send(round: Int, turn: Int) {
            guard turn < probes.count else {
                if round < rounds { send(round: round + 1, turn: 0) } else { finish(nil) }
                return
            }
            let i = order(round: round, count: probes.count)[turn]
            inFlight = i
            probes[i].send(round) { lastUs, firstUs in
                last[i].append(lastUs)
                first[i].append(firstUs)
                send(round: round, turn: turn + 1)
            }
        }
        watchdog.start(afterMilliseconds: 250, repeatMilliseconds: 250) {
            if MonotonicClock.nanoseconds() - probes[inFlight].lastSend > UInt64(stallMs) * 1_000_000 {
                finish("\(labels[inFlight].isEmpty ? "" : labels[inFlight] + " ")stalled after \(last[inFlight].count) of \(rounds) changes")
            }
        }
        send(round: 1, turn: 0)
    }
}
