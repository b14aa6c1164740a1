import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Followers that stop reading, or read very slowly, cost bounded memory, get the newest state
/// when they read again, and never slow the followers that keep up.
@Suite("Stalled followers", .timeLimit(.minutes(3)))
struct StalledClientTests {
    /// Makes `count` changes, pipelined in batches, reading each OK and PAGE; returns the last version.
    static func drive(_ driver: LineClient, changes count: Int, from start: UInt64, batch: Int = 500) async throws -> UInt64 {
        // Every NEXT gets its OK, in order. The driver's own PAGE events can be conflated like
        // anyone's: when the parallel suite keeps this process off the CPU, its replies back up
        // and only the newest state is kept for it. So its PAGEs only have to grow, never come
        // before their OK, and end at the batch's last version.
        var version = start
        var event = start
        var left = count
        while left > 0 {
            let n = min(batch, left)
            try await driver.send(lines: Array(repeating: "NEXT", count: n))
            let target = version + UInt64(n)
            while version < target || event < target {
                let line = try await driver.readServerLine()
                switch line.kind {
                case "OK":
                    guard line.version == version + 1 else { throw HarnessError("expected OK v\(version + 1), got \(line)") }
                    version += 1
                case "PAGE":
                    guard let v = line.version, v > event, v <= version else {
                        throw HarnessError("PAGE out of order after OK v\(version) and PAGE v\(event): \(line)")
                    }
                    event = v
                default:
                    throw HarnessError("expected OK or PAGE, got \(line)")
                }
            }
            left -= n
        }
        return version
    }

    /// Reads until the PAGE with `version` arrives; returns the lines read and how long it took.
    static func catchUp(_ client: LineClient, to version: UInt64) async throws -> (lines: Int, elapsed: Duration) {
        let start = ContinuousClock.now
        var lines = 0
        while true {
            let line = ServerLine(try await client.readLine())
            lines += 1
            if line.kind == "PAGE", line.version == version { return (lines, ContinuousClock.now - start) }
            if let v = line.version, v > version { throw HarnessError("read past v\(version): \(line)") }
        }
    }

    @Test("20 stalled followers while 100,000 changes happen: RSS grows < 32 MiB, each gets the final state at once when it reads")
    func twentyStalledFollowers() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 7)], arguments: ["--wrap"]) { daemon, _ in
            var stalled: [LineClient] = []
            for i in 0..<20 {
                let (client, _) = try await daemon.join(label: "stalled-\(i)", receiveBufferSize: 4096)
                stalled.append(client)
            }
            let (driver, hello) = try await daemon.join(label: "driver")
            let baseline = try daemon.rssKiB()
            let last = try await Self.drive(driver, changes: Daemon.volume(100_000), from: hello.version ?? 0)
            let grown = try daemon.rssKiB() - baseline
            if Daemon.resourceBudgetsApply { #expect(grown < 32 * 1024, "RSS grew by \(grown) KiB") }
            var times: [Duration] = []
            for client in stalled {
                let (lines, elapsed) = try await Self.catchUp(client, to: last)
                #expect(lines < 5_000, "\(client.label) read \(lines) lines to reach the newest state: stale pages were queued")
                times.append(elapsed)
            }
            times.sort()
            let median = times[times.count / 2]
            // The final state is already in the socket (or next in line): reading it is immediate.
            // (Not timed under a sanitizer, which makes every step 5–15 times slower: 109 ms once
            // under TSan.)
            if Daemon.resourceBudgetsApply {
                #expect(median < .milliseconds(100), "median catch-up \(median), slowest \(times.last!)")
            }
            #expect(times.last! < .seconds(2), "slowest catch-up \(times.last!)")
        }
    }

    @Test("a follower that reads one byte a second stays connected, costs nothing, and ends with the newest state")
    func oneByteASecond() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 5)], arguments: ["--wrap"]) { daemon, _ in
            let slowFD = try await daemon.connect(label: "trickle", receiveBufferSize: 4096)
            let (driver, hello) = try await daemon.join(label: "driver")
            let (bystander, _) = try await daemon.join(label: "bystander")
            var version = hello.version ?? 0
            let baseline = try daemon.rssKiB()
            for second in 0..<3 {
                version = try await Self.drive(driver, changes: 2_000, from: version)
                #expect(try await slowFD.trickle(1) == 1, "second \(second): one byte")
                #expect(try await bystander.command("PING \(second)").header.raw == "OK PONG \(second)")
                try await Task.sleep(for: .seconds(1))
            }
            if Daemon.resourceBudgetsApply { #expect(try daemon.rssKiB() - baseline < 16 * 1024) }
            // It is still connected and, reading at full speed now, reaches the newest state.
            let (lines, _) = try await Self.catchUp(slowFD, to: version)
            #expect(lines < 2_000, "\(lines) lines for 6,000 changes")
            #expect(try await slowFD.command("PING alive").header.raw == "OK PONG alive")
        }
    }

    @Test("1,000 stalled followers in the room do not slow a follower that keeps up")
    func fastFollowerBesideAThousandStalled() async throws {
        // 1,002 connections from one address: above the default per-address limit of 1,000.
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 9)], arguments: ["--wrap", "--max-clients-per-address", "2000"]) { daemon, _ in
            let (driver, hello) = try await daemon.join(label: "driver")
            let (fast, _) = try await daemon.join(label: "fast")
            var version = hello.version ?? 0

            /// Change→event latency at the fast follower, closed loop, in microseconds, and the
            /// daemon's CPU time per change in microseconds.
            func measure(_ rounds: Int) async throws -> (latencies: [Int], cpuPerChange: Int) {
                var samples: [Int] = []
                let cpuBefore = try daemon.cpuTime()
                for _ in 0..<rounds {
                    let start = ContinuousClock.now
                    try await driver.send("NEXT")
                    version += 1
                    while true {
                        let line = try await fast.readServerLine()
                        if line.kind == "PAGE", line.version == version { break }
                    }
                    let elapsed = ContinuousClock.now - start
                    samples.append(Int(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
                    _ = try await driver.readServerLine()  // OK
                    _ = try await driver.readServerLine()  // PAGE
                }
                let cpu = try daemon.cpuTime() - cpuBefore
                return (samples.sorted(), Int(cpu / .microseconds(1)) / rounds)
            }
            let (alone, cpuAlone) = try await measure(100)
            // What a member costs when it keeps up: 1,000 followers with room for every change
            // (their receive buffers take the 100 changes unread), so each change is one write
            // per member. About 7 µs of the daemon's CPU a member, mostly the kernel's, in
            // release and debug builds alike.
            var keepingUp: [LineClient] = []
            for i in 0..<1_000 { keepingUp.append(try await daemon.connect(label: "keeping-up-\(i)")) }
            #expect(try await eventually(attempts: 1_000) { try await driver.ok("STATUS").int("clients") == 1_002 })
            let (_, cpuKeepingUp) = try await measure(100)
            for client in keepingUp { client.close() }
            keepingUp.removeAll()
            #expect(try await eventually(attempts: 1_000) { try await driver.ok("STATUS").int("clients") == 2 })
            var stalled: [LineClient] = []
            for i in 0..<1_000 { stalled.append(try await daemon.connect(label: "stalled-\(i)", receiveBufferSize: 4096)) }
            // Fill the stalled followers' buffers first, then measure.
            version = try await Self.drive(driver, changes: 2_000, from: version)
            _ = try await Self.catchUp(fast, to: version)
            let (crowded, cpuCrowded) = try await measure(100)
            let p50Alone = alone[alone.count / 2], p50Crowded = crowded[crowded.count / 2]
            // Guards against stalls, not a benchmark. A stalled member costs the fan-out pass only
            // its latest-state slot, so the daemon's CPU time per change stays in the same range;
            // a write attempt or a render per stalled member would add over 1 ms to an optimized
            // daemon. CPU time, because wall-clock latency in the parallel suite also measures the
            // other tests: a p50 bound of 10× + 2 ms failed once at 9.2 ms beside the Redis suite.
            // An unoptimized (debug) daemon spends 0.7 to 0.9 µs of its own on each stalled
            // member's slot, as much as that 1 ms allowance, so there the bound is the daemon's own
            // cost of a member that keeps up: a stalled member costs under a quarter of it (0.6%
            // measured in release, 10 to 13% in debug; a write attempt or a render per stalled
            // member is over a third in debug).
            // Measured on b8f4bee's daemon, one test at a time: 14–23 µs alone, 53–69 µs beside 1,000
            // stalled, 6,700–7,600 µs beside 1,000 that keep up (release); 35–43, 707–964 and
            // 6,700–8,500 µs (debug).
            let costs = "daemon CPU per change: \(cpuAlone) µs alone, \(cpuKeepingUp) µs beside 1,000 that keep up, \(cpuCrowded) µs beside 1,000 stalled"
            if Daemon.resourceBudgetsApply {
                if !Binaries.areUnoptimized { #expect(cpuCrowded < cpuAlone * 5 + 1_000, "\(costs)") }
                #expect((cpuCrowded - cpuAlone) * 4 < cpuKeepingUp - cpuAlone, "\(costs)")
            }
            // And the fast follower's latency is not held back by a timer or a stalled peer (a
            // write waiting on a stalled socket, or a retry timer, would add 100 ms or more to
            // most rounds). The median, with 50 ms of room, because in the parallel suite this
            // measures the other tests too: one preempted round of 100 (170 ms once, at
            // 7bc7a0d+1) decided a p99, and a p90 bound of 10× + 20 ms failed at 30.8 ms with
            // one busy loop beside the suite (the runs behind bd093b6).
            #expect(p50Crowded < p50Alone * 10 + 50_000, "median \(p50Alone) µs alone, \(p50Crowded) µs beside 1,000 stalled")
            #expect(daemon.isRunning && stalled.count == 1_000)
        }
    }
}
