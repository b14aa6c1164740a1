import ArgumentParser
import UV
#if canImport(Glibc)
import Glibc
#endif

/// One target as the coordinator's main thread sees it: its `Hub` (driver and worker control
/// links) on a loop that may be shared with other targets, and the worker processes that hold
/// its followers. `run` has one; `interleave` has one per target on one loop.
final class TargetSession {
    let runner: LoopRunner
    let hub: LoopBound<Hub>
    private(set) var workerPIDs: [pid_t] = []

    /// What `open` got: the links of the workers that hold at least one follower, and the counts.
    struct Opened {
        var links: [LoopBound<Link>]
        var ready: Int
        var errors: Int
        var reasons: String
    }

    init(runner: LoopRunner, hub: Hub) {
        self.runner = runner
        self.hub = LoopBound(hub)
    }

    /// Starts `count` workers (this executable re-executed as `worker`) whose followers connect
    /// to `host` on `ports[i mod ports.count]` (TLS when `tlsCA` is set, WebSockets upgrading
    /// `webSocketPath` when it is), and waits (up to 10 s)
    /// until every one has connected to the hub. Workers spawned before a failure are still in
    /// `workerPIDs`, for `stopWorkers`. Throws `ExitCode(1)` after logging what failed.
    func startWorkers(count: Int, host: String, ports: [Int], tlsCA: String?, webSocketPath: String? = nil) throws {
        let hub = self.hub
        let controlPort: Int = runner.sync { done in
            do { done(try hub.value.listen(expecting: count) { log("workers connected") }) } catch {
                log("cannot listen for workers: \(error)"); done(0)
            }
        }
        guard controlPort > 0 else { throw ExitCode(1) }
        for id in 0..<count {
            let port = ports[id % ports.count]  // this worker's followers connect here
            guard let child = Spawn.run(Spawn.selfExecutable, ["worker", "--control-port", "\(controlPort)", "--target", hub.value.target.rawValue,
                                                                "--host", host, "--port", "\(port)", "--id", "\(id)"]
                                                                + (tlsCA.map { ["--tls-ca", $0] } ?? [])
                                                                + (webSocketPath.map { ["--ws", $0] } ?? [])) else {
                log("cannot spawn worker"); throw ExitCode(1)
            }
            workerPIDs.append(child.pid)
        }
        var waited = 0
        while runner.sync({ done in done(hub.value.workers.count) }) < count {
            sleepMilliseconds(20); waited += 20
            if waited > 10_000 { log("workers did not connect"); throw ExitCode(1) }
        }
    }

    /// Connects and prepares the driver; nil, or what went wrong.
    func connectDriver() -> String? {
        let hub = self.hub
        return runner.sync { done in hub.value.connectDriver(done) }
    }

    /// Opens `count` followers spread evenly over the workers.
    func open(_ count: Int, idleTimeoutMs: Int) -> Opened {
        let hub = self.hub
        let replies: [String] = runner.sync { done in
            let links = hub.value.workers
            var lines: [String] = []
            for i in 0..<links.count {
                let share = count / links.count + (i < count % links.count ? 1 : 0)
                lines.append("OPEN \(share) \(idleTimeoutMs)")
            }
            hub.value.request(links, lines, expect: "OPENED", done)
        }
        var opened = Opened(links: [], ready: 0, errors: 0, reasons: "")
        var reasons: [String] = []
        let links = runner.sync { done in done(hub.value.workers.map { LoopBound($0) }) }
        for (i, reply) in replies.enumerated() {
            let words = reply.split(separator: " ")
            let r = Int(words[1]) ?? 0
            opened.ready += r
            opened.errors += Int(words[2]) ?? 0
            if words[3] != "-" { reasons.append(String(words[3])) }
            if r > 0 { opened.links.append(links[i]) }
        }
        opened.reasons = reasons.joined(separator: ",")
        return opened
    }

    /// Every worker closes every follower it holds; returns when all have.
    func closeAll() {
        let hub = self.hub
        _ = runner.sync { done in hub.value.request(hub.value.workers, hub.value.workers.map { _ in "CLOSEALL" }, expect: "CLOSED", done) }
    }

    /// The base version of a phase and `ARM <base> <changes> <mode>` to every one of `links`.
    func arm(_ links: LoopBound<[Link]>, changes: Int, mode: String) {
        let hub = self.hub
        let base: Int = runner.sync { done in hub.value.phaseBase(done) }
        _ = runner.sync { done in hub.value.request(links.value, links.value.map { _ in "ARM \(base) \(changes) \(mode)" }, expect: "ARMED", done) }
    }

    /// Tells every worker to quit and waits for every worker process.
    func stopWorkers() {
        let hub = self.hub
        _ = runner.sync { (done: @escaping (Bool) -> Void) in
            for link in hub.value.workers { link.send("QUIT") }
            done(true)
        }
        for pid in workerPIDs { Spawn.wait(pid) }
        workerPIDs = []
    }
}
