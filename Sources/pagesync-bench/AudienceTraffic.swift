import PageSyncCore
import Synchronization
import UV
#if canImport(Glibc)
import Glibc
#endif

/// The view and hand traffic of `pagesync-bench audience`, on a thread of its own so that it
/// goes on while the main thread waits for a page turn: every 10 ms, the next changers in turn
/// each send their next step (`VIEW BROWSE 2`, `HAND UP`, `VIEW FOLLOW`, `HAND DOWN`), `rate`
/// a second in all, while running. The replies are left in the sockets (a few bytes a second).
final class ViewChanger: @unchecked Sendable {  // the thread owns `steps` and `sent` until `stop`
    /// Each changer's last view and hand after ``stop()``, and how many lines were sent.
    struct Final { var browsing: Int; var hands: Int; var sent: Int }

    private static let lines: [[UInt8]] = ["VIEW BROWSE 2\n", "HAND UP\n", "VIEW FOLLOW\n", "HAND DOWN\n"].map { Array($0.utf8) }
    private let fds: [Int32]
    private let rate: Int
    /// 0 paused, 1 running, 2 stopping.
    private let state = Atomic<Int>(0)
    private var steps: [Int]
    private var sent = 0
    private var thread = pthread_t()

    /// Starts the thread, paused.
    init(fds: [Int32], rate: Int) {
        self.fds = fds
        self.rate = rate
        steps = Array(repeating: 0, count: fds.count)
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { argument in
            Unmanaged<ViewChanger>.fromOpaque(argument!).takeRetainedValue().work()
            return nil
        }, context)
    }

    /// Sends (`true`) or pauses.
    func set(running: Bool) { state.store(running ? 1 : 0, ordering: .releasing) }

    /// Stops the thread and says where each changer was left.
    func stop() -> Final {
        state.store(2, ordering: .releasing)
        pthread_join(thread, nil)
        // After s lines a changer browses when s mod 4 is 1 or 2 (VIEW BROWSE sent, VIEW FOLLOW
        // not yet), and has its hand up when it is 2 or 3 (HAND UP sent, HAND DOWN not yet).
        let browsing = steps.filter { $0 % 4 == 1 || $0 % 4 == 2 }.count
        let hands = steps.filter { $0 % 4 == 2 || $0 % 4 == 3 }.count
        return Final(browsing: browsing, hands: hands, sent: sent)
    }

    private func work() {
        guard !fds.isEmpty else { return }
        let perBatch = max(1, rate / 100)
        var next = 0
        var due = MonotonicClock.nanoseconds()
        while true {
            switch state.load(ordering: .acquiring) {
            case 2: return
            case 1:
                let now = MonotonicClock.nanoseconds()
                if now >= due {
                    for _ in 0..<perBatch {
                        _ = BlockingSocket.sendAll(fds[next], Self.lines[steps[next] % 4])
                        steps[next] += 1
                        sent += 1
                        next = (next + 1) % fds.count
                    }
                    due = max(due + 10_000_000, now)
                } else {
                    usleep(UInt32(min(10_000, (due - now) / 1000)))
                }
            default:
                due = MonotonicClock.nanoseconds()
                usleep(2000)
            }
        }
    }
}

/// The presenter's `AUDIENCE` events as they arrive.
struct AudienceLog {
    struct Event { var at: UInt64; var following: Int; var browsing: Int; var hands: Int }
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
                      let f = parsed.int("following"), let b = parsed.int("browsing"), let h = parsed.int("hands") else { continue }
                all.append(Event(at: MonotonicClock.nanoseconds(), following: f, browsing: b, hands: h))
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
