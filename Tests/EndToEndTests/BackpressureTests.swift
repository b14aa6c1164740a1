import Testing

/// Clients that do not read must not make the daemon's memory grow.
// 3 minutes, not 1: the flooder test takes about 4 s on the release daemon, but 50 to over 150 s
// on the ASan-built debug daemon while the machine is busy (it hit 60 s once beside two fuzzers).
@Suite("Slow readers and flooders", .timeLimit(.minutes(3)))
struct BackpressureTests {
    /// The most the daemon's RSS may grow while one client does not read.
    static let rssBudgetKiB = 16 * 1024

    @Test("a client that never reads while 10,000 changes happen: bounded RSS, then only the newest state")
    func slowReaderIsConflated() async throws {
        let changes = 10_000
        let batch = 250
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 7)], arguments: ["--wrap", "--no-fsync"]) { daemon, _ in
            // A small, fixed receive buffer: the kernel cannot absorb the backlog for the daemon.
            let (slow, _) = try await daemon.join(label: "slow", receiveBufferSize: 4096)
            let (driver, _) = try await daemon.join(label: "driver")
            try await driver.ok("NAME driver-with-a-rather-long-name")
            let baseline = try daemon.rssKiB()
            var peak = baseline
            var version: UInt64 = 0
            for _ in 0..<(changes / batch) {
                try await driver.send(lines: Array(repeating: "NEXT", count: batch))
                for _ in 0..<batch {
                    let ok = try await driver.readServerLine()
                    version += 1
                    guard ok.kind == "OK", ok.version == version else {
                        throw HarnessError("driver: expected OK version=\(version), got \(ok)")
                    }
                    let event = try await driver.readServerLine()
                    guard event.kind == "PAGE", event.version == version else {
                        throw HarnessError("driver: expected PAGE version=\(version), got \(event)")
                    }
                }
                peak = max(peak, try daemon.rssKiB())
            }
            if Daemon.resourceBudgetsApply { #expect(peak - baseline < Self.rssBudgetKiB, "RSS grew from \(baseline) KiB to \(peak) KiB") }

            // Now the slow client reads: a bounded amount, ending with the newest state.
            var received: [ServerLine] = []
            var bytes = 0
            while received.last?.version != version {
                let line = try await slow.readLine()
                bytes += line.utf8.count + 1
                received.append(ServerLine(line))
                if received.count > changes { break }
            }
            let last = try #require(received.last)
            #expect(last.kind == "PAGE" && last.version == UInt64(changes) && last.page == changes % 7 + 1, "\(last)")
            #expect(received.allSatisfy { $0.kind == "PAGE" }, "only events were pending")
            let versions = received.compactMap(\.version)
            #expect(versions == versions.sorted() && Set(versions).count == versions.count, "events out of order or repeated")
            // Kernel buffers may hold some stale lines (about 40 with a 4 KiB receive buffer); a
            // daemon that queues instead of conflating delivers all 10,000.
            #expect(received.count < changes / 20, "got \(received.count) PAGE lines (\(bytes) bytes) for \(changes) changes: stale pages were queued, not conflated")
            #expect(try await slow.sync() == [], "nothing stale after the newest PAGE")
        }
    }

    @Test("pipelined commands then a half-close: every command is answered, in order, before the server closes")
    func halfCloseAfterPipelinedCommands() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--no-fsync"]) { daemon, _ in
            let (client, hello) = try await daemon.join(label: "pipeliner")
            let count = 5000
            var payload = ""
            for i in 0..<count { payload += "PING \(i)\n" }
            payload += "NEXT\n"
            try await client.sendRaw(Array(payload.utf8))
            client.shutdownWrite()
            for i in 0..<count {
                let line = try await client.readLine()
                guard line == "OK PONG \(i)" else { throw HarnessError("reply \(i): \(line.debugDescription)") }
            }
            #expect(try await client.readLine() == "OK page=2 pages=3 version=\((hello.version ?? 0) + 1) line=1 mark=-")
            #expect(try await client.readServerLine().kind == "PAGE")
            #expect(try await client.readLineOrEOF() == nil, "the server closes once everything is answered")
        }
    }

    @Test("clients sending one small command per packet without reading: each reply queued on its own counts its bookkeeping, so RSS stays bounded; then every reply arrives in order")
    func smallRepliesCountTheirBookkeeping() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--no-fsync"]) { daemon, _ in
            var flooders: [LineClient] = []
            for i in 0..<4 { flooders.append(try await daemon.join(label: "flooder-\(i)", receiveBufferSize: 4096).0) }
            let (bystander, _) = try await daemon.join(label: "bystander")
            let baseline = try daemon.rssKiB()
            // Each PING read alone gets its PONG written alone: once the kernel holds what it
            // will, every PONG is a queued write of 8 bytes, with about 256 bytes of bookkeeping.
            // Counted by bytes alone, 256 KiB of them held about 8 MiB per client (the kernel's
            // buffers take the PINGs the daemon no longer reads, so the senders never block).
            let count = 60_000
            try await withThrowingTaskGroup(of: Int.self) { group in
                for flooder in flooders { group.addTask { try await flooder.sendOnePerPacketUntilStalled("PING", limit: count) } }
                for try await sent in group { #expect(sent == count) }
            }
            try await Task.sleep(for: .seconds(1))
            let stalledRSS = try daemon.rssKiB()
            if Daemon.resourceBudgetsApply {
                #expect(stalledRSS - baseline < 6 * 1024, "RSS grew from \(baseline) KiB to \(stalledRSS) KiB with 4 clients not reading")
            }
            #expect(try await bystander.command("PING still-here").header.raw == "OK PONG still-here")
            // Nothing was lost: each gets a PONG for every PING, then the end marker. All four
            // read at once: one left at a zero receive window while the others are read first
            // (tens of seconds on a busy machine) can wait out TCP's zero-window probe, which
            // backs off to tens of seconds (a 15 s read timed out so once, in a full-suite run).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for flooder in flooders {
                    group.addTask {
                        try await flooder.sendWhileReading(Array("PING end\n".utf8))
                        for i in 0..<count {
                            let line = try await flooder.readLine()
                            guard line == "OK PONG" else {
                                throw HarnessError("\(flooder.label): reply \(i) of \(count): \(line.debugDescription)")
                            }
                        }
                        let end = try await flooder.readLine()
                        guard end == "OK PONG end" else { throw HarnessError("\(flooder.label): last reply \(end.debugDescription)") }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("a client flooding commands without reading is throttled, then gets every reply in order")
    func flooderIsThrottled() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--no-fsync"]) { daemon, _ in
            let (flooder, _) = try await daemon.join(label: "flooder", receiveBufferSize: 4096)
            let (bystander, _) = try await daemon.join(label: "bystander")
            let padding = String(repeating: "p", count: 100)
            func command(_ i: Int) -> String {
                let digits = String(i)
                return "PING " + String(repeating: "0", count: 6 - digits.count) + digits + " " + padding + "\n"
            }
            let width = command(0).utf8.count
            let total = 150_000  // ~16 MiB of commands, ~16 MiB of replies if nothing throttled
            // Every command has the same width, so a byte offset tells which command it is in.
            var payload = [UInt8](repeating: 0, count: total * width)
            let template = Array(command(0).utf8)
            for i in 0..<total {
                let start = i * width
                payload.replaceSubrange(start..<(start + width), with: template)
                var n = i
                for digit in stride(from: start + 10, through: start + 5, by: -1) {
                    payload[digit] = UInt8(ascii: "0") + UInt8(n % 10)
                    n /= 10
                }
            }

            let baseline = try daemon.rssKiB()
            let sent = try await flooder.sendUntilStalled(payload)
            let stalledRSS = try daemon.rssKiB()
            #expect(sent < payload.count, "the daemon read all \(payload.count) bytes from a client that never reads: no backpressure")
            if Daemon.resourceBudgetsApply { #expect(stalledRSS - baseline < Self.rssBudgetKiB, "RSS grew from \(baseline) KiB to \(stalledRSS) KiB") }
            // Others are served while the flooder is throttled.
            #expect(try await bystander.command("PING still-here").header.raw == "OK PONG still-here")

            // Finish the partly sent command, mark the end, then read everything.
            let count = (sent + width - 1) / width
            let rest = Array(payload[sent..<(count * width)]) + Array("PING end\n".utf8)
            try await flooder.sendWhileReading(rest)
            for i in 0..<count {
                let line = try await flooder.readLine()
                let expected = "OK PONG " + command(i).dropFirst(5).dropLast()
                guard line == expected else {
                    throw HarnessError("reply \(i) of \(count): expected \(expected.prefix(20))…, got \(line.prefix(60).debugDescription)")
                }
            }
            #expect(try await flooder.readLine() == "OK PONG end")
        }
    }
}
