import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// One follower connection held by a worker.
final class Follower {
    var connection: (any StreamConnection)?
    var splitter = LineSplitter()
    var ready = false
    var finished = false        // failed or closed; counted once
    var lastSeq = 0
}

/// A worker process: holds a share of the follower connections on its own libuv loop and reports
/// to the coordinator over a control connection (one line per message):
///
/// coordinator -> worker: `OPEN <count> <idle-timeout-ms>`, `ARM <base> <changes> <L|T>`,
/// `CLOSEALL`, `CHURN <concurrency> <ms>`, `PINGALL <timeout-ms>`, `QUIT`.
/// worker -> coordinator: `WORKER <id>`, `OPENED <ready> <errors> <reasons>`, `ARMED`,
/// `R <seq> <ns> <first-ns>` (latency: every follower of this worker has change `seq`; `ns` =
/// the last receipt, `first-ns` the first, CLOCK_MONOTONIC), `T <ns> <delivered> <lost>` (throughput: every follower has the
/// last change), `CLOSED <lost>`, `CHURNED <cycles> <errors> <reasons>`, `PONGED <pongs> <asked>`
/// (every held follower sent one ping; how many answered).
///
/// With a TLS context every follower (and every churn connection) is a TLS connection that
/// verifies the server; a churn cycle is then a full handshake, a ping and a close.
final class Worker {
    enum Mode { case idle, latency, throughput }

    let loop: EventLoop
    let target: Target
    let host: String
    let port: Int
    /// Set for TLS followers.
    let tls: TLSContext?
    /// Set for WebSocket followers: the path (and query) they upgrade, e.g. `/ws`.
    let webSocketPath: String?
    private var control: TCPConnection?
    private var controlSplitter = LineSplitter()
    private let ticker: UV.Timer

    private var followers: [Follower] = []
    private var readyCount = 0
    private var lostCount = 0

    // OPEN state
    private var opening = false
    private var toStart = 0
    private var inFlight = 0
    private var openErrors = 0
    private var openReady = 0
    private var reasons: [String: Int] = [:]
    private var lastProgress: UInt64 = 0
    private var idleTimeout: UInt64 = 0
    /// Connections being opened at once (a WebSocket's upgrade is an HTTP request: the web
    /// listener answers at most 64 connections at once, so 32).
    private var window: Int { webSocketPath == nil ? 128 : 32 }

    // ARM state
    private var mode = Mode.idle
    private var base = 0
    private var changes = 0
    private var counts: [Int32] = []
    private var lastTimes: [UInt64] = []
    private var firstTimes: [UInt64] = []
    private var nextReport = 1
    private var doneCount = 0
    private var doneTime: UInt64 = 0
    private var delivered = 0

    /// CHURN: connections opened and closed in chains, apart from the held followers.
    private lazy var churn = Churn(target: target,
                                   connect: { [unowned self] done in connect(done) },
                                   report: { [unowned self] line in send(line) })

    // PINGALL state
    private var pingAsked = 0
    private var pongs = 0
    private var pingDeadline: UInt64 = 0

    init(loop: EventLoop, target: Target, host: String, port: Int, tls: TLSContext? = nil, webSocketPath: String? = nil) {
        self.loop = loop
        self.target = target
        self.host = host
        self.port = port
        self.tls = tls
        self.webSocketPath = webSocketPath
        ticker = UV.Timer(loop: loop)
    }

    /// Connects one follower or churn connection: plain TCP, TLS when `tls` is set, or a
    /// WebSocket (its lines one message each) when `webSocketPath` is.
    private func connect(_ done: @escaping (Result<any StreamConnection, UVError>) -> Void) {
        if let webSocketPath {
            WebSocketClient.connect(loop: loop, host: host, port: port, path: webSocketPath) { result in
                done(result.map { $0 as any StreamConnection }.mapError { failure in
                    switch failure {
                    case .connection(let error): error ?? .endOfFile
                    case .refused: .connectionRefused
                    }
                })
            }
        } else if let tls {
            TLSConnection.connect(loop: loop, host: host, port: port, context: tls) { done($0.map { $0 as any StreamConnection }) }
        } else {
            TCPConnection.connect(loop: loop, host: host, port: port) { done($0.map { $0 as any StreamConnection }) }
        }
    }

    /// Connects to the coordinator and serves it until `QUIT` or the control connection drops.
    func start(controlPort: Int, id: Int) {
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: controlPort) { [self] result in
            switch result {
            case .failure(let error):
                log("worker \(id): cannot reach coordinator: \(error)")
                exit(2)
            case .success(let connection):
                control = connection
                connection.setNoDelay(true)
                connection.write(Array("WORKER \(id)\n".utf8))
                connection.startReading { [self] event in
                    switch event {
                    case .data(let bytes):
                        var lines: [String] = []
                        controlSplitter.feed(bytes) { lines.append($0.string) }
                        for line in lines { handleControl(line) }
                    case .eof, .error:
                        exit(0)
                    }
                }
            }
        }
        ticker.start(afterMilliseconds: 100, repeatMilliseconds: 100) { [self] in tick() }
    }

    private func send(_ line: String) {
        control?.write(Array((line + "\n").utf8))
    }

    private func handleControl(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        guard let verb = words.first else { return }
        switch verb {
        case "OPEN":
            open(count: Int(words[1]) ?? 0, idleTimeoutMs: Int(words[2]) ?? 5000)
        case "ARM":
            arm(base: Int(words[1]) ?? 0, changes: Int(words[2]) ?? 0, mode: words[3] == "L" ? .latency : .throughput)
        case "CLOSEALL":
            closeAll()
        case "CHURN":
            churn.start(concurrency: Int(words[1]) ?? 1, milliseconds: Int(words[2]) ?? 1000)
        case "PINGALL":
            pingAll(timeoutMs: Int(words[1]) ?? 10_000)
        case "QUIT":
            closeAll(reply: false)
            exit(0)
        default:
            log("worker: unknown control line \(line)")
        }
    }

    // MARK: OPEN

    private func open(count: Int, idleTimeoutMs: Int) {
        opening = true
        toStart = count
        openErrors = 0
        openReady = 0
        reasons = [:]
        idleTimeout = UInt64(idleTimeoutMs) * 1_000_000
        lastProgress = MonotonicClock.nanoseconds()
        startMore()
        checkOpenDone()
    }

    private func startMore() {
        while opening && toStart > 0 && inFlight < window {
            toStart -= 1
            inFlight += 1
            let follower = Follower()
            followers.append(follower)
            connect { [self] result in
                switch result {
                case .failure(let error):
                    failOpen(follower, reason: error.name)
                case .success(let connection):
                    if follower.finished { connection.close(); return }
                    follower.connection = connection
                    connection.startReading { [unowned self] event in
                        switch event {
                        case .data(let bytes): onData(follower, bytes)
                        case .eof: lose(follower, reason: "eof")
                        case .error(let error): lose(follower, reason: error.name)
                        }
                    }
                    let hello = target.followerHello
                    if !hello.isEmpty { connection.write(hello) }
                }
            }
        }
    }

    /// Closes `follower` for good; false when it was already.
    private func closeFollower(_ follower: Follower) -> Bool {
        guard !follower.finished else { return false }
        follower.finished = true
        follower.connection?.close()
        follower.connection = nil
        return true
    }

    private func failOpen(_ follower: Follower, reason: String) {
        guard closeFollower(follower) else { return }
        inFlight -= 1
        openErrors += 1
        reasons[reason, default: 0] += 1
        lastProgress = MonotonicClock.nanoseconds()
        startMore()
        checkOpenDone()
    }

    private func checkOpenDone() {
        guard opening, toStart == 0, inFlight == 0 else { return }
        opening = false
        followers.removeAll { $0.finished }
        send("OPENED \(openReady) \(openErrors) \(Churn.reasonsText(reasons))")
    }

    private func tick() {
        let now = MonotonicClock.nanoseconds()
        if opening && now - lastProgress > idleTimeout {
            // Whatever has not finished its handshake by now never will (e.g. the server stopped
            // accepting): count it as an error.
            toStart = 0
            for follower in followers where !follower.ready && !follower.finished {
                failOpen(follower, reason: "timeout")
            }
            checkOpenDone()
        }
        if pingAsked > 0 && now > pingDeadline { finishPings() }
        churn.checkStall(now: now)
    }

    // MARK: Receiving

    @inline(__always)
    private func onData(_ follower: Follower, _ bytes: UnsafeRawBufferPointer) {
        let now = MonotonicClock.nanoseconds()
        follower.splitter.feed(bytes) { line in
            if !follower.ready {
                if target.isFollowerReady(line) {
                    follower.ready = true
                    readyCount += 1
                    openReady += 1
                    inFlight -= 1
                    lastProgress = now
                    startMore()
                    checkOpenDone()
                } else if target.isRefusal(line) {
                    let word = line.string.split(separator: " ").prefix(2).joined(separator: "_")
                    failOpen(follower, reason: word.isEmpty ? "refused" : word)
                }
                return
            }
            if target.isServerPing(line) {
                follower.connection?.write(Array("PONG\r\n".utf8))
                return
            }
            if pingAsked > 0 && target.isPong(line) {
                pongs += 1
                if pongs >= pingAsked { finishPings() }
                return
            }
            guard mode != .idle else { return }
            let event = WireLineView(line)  // every target's payload is a pagesync PAGE line
            guard event.kind == .page, let version = event.int("version") else { return }
            let seq = version - base
            guard seq > follower.lastSeq else { return }
            delivered += 1
            record(follower, seq: seq, at: now)
        }
    }

    @inline(__always)
    private func record(_ follower: Follower, seq: Int, at now: UInt64) {
        let previous = follower.lastSeq
        follower.lastSeq = seq
        switch mode {
        case .idle:
            return
        case .latency:
            let upper = min(seq, changes)
            if previous + 1 <= upper {
                for s in (previous + 1)...upper {
                    counts[s] += 1
                    if now > lastTimes[s] { lastTimes[s] = now }
                    if firstTimes[s] == 0 || now < firstTimes[s] { firstTimes[s] = now }
                }
            }
            reportLatency()
        case .throughput:
            if seq >= changes && previous < changes {
                doneCount += 1
                if now > doneTime { doneTime = now }
                reportThroughput()
            }
        }
    }

    private func reportLatency() {
        while mode == .latency && nextReport <= changes && Int(counts[nextReport]) >= readyCount {
            send("R \(nextReport) \(lastTimes[nextReport]) \(firstTimes[nextReport])")
            nextReport += 1
        }
    }

    private func reportThroughput() {
        if mode == .throughput && doneCount >= readyCount {
            send("T \(doneTime) \(delivered) \(lostCount)")
            mode = .idle
        }
    }

    private func lose(_ follower: Follower, reason: String) {
        if !follower.ready {
            failOpen(follower, reason: reason)
            return
        }
        guard closeFollower(follower) else { return }
        readyCount -= 1
        lostCount += 1
        log("worker: follower lost (\(reason))")
        switch mode {
        case .latency: reportLatency()
        case .throughput:
            if follower.lastSeq >= changes { doneCount -= 1 }
            reportThroughput()
        case .idle: break
        }
    }

    // MARK: ARM / CLOSEALL

    private func arm(base: Int, changes: Int, mode: Mode) {
        self.base = base
        self.changes = changes
        self.mode = mode
        counts = mode == .latency ? [Int32](repeating: 0, count: changes + 1) : []
        lastTimes = mode == .latency ? [UInt64](repeating: 0, count: changes + 1) : []
        firstTimes = lastTimes
        nextReport = 1
        doneCount = 0
        doneTime = 0
        delivered = 0
        for follower in followers { follower.lastSeq = 0 }
        send("ARMED")
        if readyCount == 0 {
            if mode == .throughput { reportThroughput() } else { reportLatency() }
        }
    }

    private func closeAll(reply: Bool = true) {
        mode = .idle
        for follower in followers { _ = closeFollower(follower) }
        followers.removeAll()
        readyCount = 0
        let lost = lostCount
        lostCount = 0
        if reply { send("CLOSED \(lost)") }
    }

    // MARK: PINGALL

    /// Every held follower sends one ping; `PONGED` says how many answered within the timeout.
    private func pingAll(timeoutMs: Int) {
        let held = followers.filter { $0.ready && !$0.finished && $0.connection != nil }
        guard !held.isEmpty else { send("PONGED 0 0"); return }
        pongs = 0
        pingAsked = held.count
        pingDeadline = MonotonicClock.nanoseconds() + UInt64(timeoutMs) * 1_000_000
        for follower in held { follower.connection?.write(target.ping) }
    }

    private func finishPings() {
        guard pingAsked > 0 else { return }
        send("PONGED \(pongs) \(pingAsked)")
        pingAsked = 0
        pongs = 0
    }
}
