import PageSyncCore
import UV

/// A worker's `CHURN <concurrency> <ms>`: `concurrency` chains of connect, hello, one ping and
/// close, each chain starting its next cycle when the last one ends, until `ms` have passed.
/// Reports `CHURNED <cycles> <errors> <reasons>` once every chain has stopped (or, through
/// `checkStall`, five seconds past the deadline with chains still out, counted as `stalled`).
final class Churn {
    private let target: Target
    private let connect: (@escaping (Result<any StreamConnection, UVError>) -> Void) -> Void
    private let report: (String) -> Void

    private var deadline: UInt64 = 0
    private var chains = 0
    private var cycles = 0
    private var errors = 0
    private var reasons: [String: Int] = [:]
    private var active = false

    init(target: Target,
         connect: @escaping (@escaping (Result<any StreamConnection, UVError>) -> Void) -> Void,
         report: @escaping (String) -> Void) {
        self.target = target
        self.connect = connect
        self.report = report
    }

    func start(concurrency: Int, milliseconds: Int) {
        deadline = MonotonicClock.nanoseconds() + UInt64(milliseconds) * 1_000_000
        cycles = 0
        errors = 0
        reasons = [:]
        chains = concurrency
        active = true
        for _ in 0..<concurrency { once() }
    }

    /// Called by the worker's ticker: chains that have not ended five seconds past the deadline
    /// are counted as stalled, and the churn reports.
    func checkStall(now: UInt64) {
        guard active, now > deadline + 5_000_000_000 else { return }
        errors += chains
        reasons["stalled", default: 0] += chains
        chains = 0
        finish()
    }

    /// `a:1,b:2`, or `-` for none: how `OPENED` and `CHURNED` list their failure reasons.
    static func reasonsText(_ reasons: [String: Int]) -> String {
        reasons.isEmpty ? "-" : reasons.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    private func once() {
        guard active else { return }
        if MonotonicClock.nanoseconds() >= deadline {
            chains -= 1
            if chains == 0 { finish() }
            return
        }
        connect { [self] result in
            switch result {
            case .failure(let error):
                failed(error.name)
            case .success(let connection):
                var splitter = LineSplitter()
                var done = false
                connection.startReading { [unowned self] event in
                    switch event {
                    case .data(let bytes):
                        var outcome: Bool? = nil
                        splitter.feed(bytes) { line in
                            if outcome == nil {
                                if target.isPong(line) { outcome = true } else if target.isRefusal(line) { outcome = false }
                            }
                        }
                        guard let ok = outcome, !done else { return }
                        done = true
                        connection.close()
                        if ok { cycles += 1; once() } else { failed("refused") }
                    case .eof, .error:
                        guard !done else { return }
                        done = true
                        connection.close()
                        failed("eof")
                    }
                }
                connection.write(target.clientHello + target.ping)
            }
        }
    }

    private func failed(_ reason: String) {
        errors += 1
        reasons[reason, default: 0] += 1
        once()
    }

    private func finish() {
        guard active else { return }
        active = false
        report("CHURNED \(cycles) \(errors) \(Self.reasonsText(reasons))")
    }
}
