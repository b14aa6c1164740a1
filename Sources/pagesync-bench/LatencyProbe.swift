import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

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
