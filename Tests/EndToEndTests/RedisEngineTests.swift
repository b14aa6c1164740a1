import Foundation
import Testing

/// Several daemons sharing rooms through a real redis-server. Not serialized: each test has its
/// own redis-server and daemons in its own workspace, and one of them waits out the 20 s
/// presence TTL, which should not hold the others back.
@Suite struct RedisEngineTests {
    private static let doc = (1...10).map { "page \($0)" }.joined(separator: "\u{0C}")

    private func daemons(_ n: Int, _ workspace: Workspace, _ redis: RedisServer) async throws -> [Daemon] {
        try workspace.write("talk.txt", Self.doc)
        var out: [Daemon] = []
        for i in 0..<n {
            out.append(try await workspace.startDaemon(documents: ["talk.txt"], arguments: [
                "--redis", redis.url, "--redis-prefix", "t\(ProcessInfo.processInfo.processIdentifier):", "--state-dir", workspace.url("s\(i)").path]))
        }
        return out
    }

    @Test("a change on one daemon reaches followers on the others; a late joiner starts on the shared page")
    func crossDaemonFanOut() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(3, workspace, redis)
            let (presenter, _) = try await ds[0].join()
            let (f1, _) = try await ds[1].join()
            let (f2, _) = try await ds[2].join()
            let ok = try await presenter.ok("GOTO 4")
            #expect(ok.fields["page"] == "4")
            for f in [f1, f2] {
                let page = try await f.expectLine(prefix: "PAGE ")
                #expect(page.fields["page"] == "4" && page.fields["version"] == ok.fields["version"])
            }
            let (late, hello) = try await ds[2].join()
            #expect(hello.fields["page"] == "4" && hello.fields["version"] == ok.fields["version"])
            // Each daemon shares its members within half a second.
            var who = try await late.command("WHO")
            for _ in 0..<100 where who.lines.count != 4 {
                try await Task.sleep(for: .milliseconds(50))
                who = try await late.command("WHO")
            }
            #expect(who.lines.count == 4, "WHO lists every daemon's clients: \(who)")
            #expect(who.lines.filter { $0.hasSuffix("you=yes") }.count == 1)
            let rooms = try await late.command("ROOMS")
            #expect(rooms.lines.first?.contains("clients=4") == true, "ROOMS counts every daemon's clients: \(rooms)")
        }
    }

    @Test("a client piping 5,000 ROOMS without reading has at most 32 Redis scripts ahead of another client's NEXT; every ROOMS is then answered in order")
    func pipedRequestsWaitTheirTurnOnTheSharedConnection() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(1, workspace, redis)
            let monitor = try await LineClient.connect(port: redis.port, label: "redis monitor")
            defer { monitor.close() }
            try await monitor.send("MONITOR")
            #expect(try await monitor.readLine() == "+OK")
            let (flooder, _) = try await ds[0].join(label: "flooder", receiveBufferSize: 4096)
            let (bystander, _) = try await ds[0].join(label: "bystander")
            // Redis runs nothing for 1.5 s (less than the 3 s after which the daemon counts it
            // unreachable): every script the daemon sends meanwhile waits in order, none is
            // answered, so the daemon cannot refill what it sent.
            #expect(try await redis.command("CLIENT PAUSE 1500 ALL") == "+OK")
            let count = 5000
            try await flooder.sendRaw(Array(String(repeating: "ROOMS\n", count: count).utf8))
            try await Task.sleep(for: .milliseconds(300))
            try await bystander.send("NEXT")
            // The MONITOR lines of the flooder's ROOMS scripts (`members`: the presence key and
            // the daemon's id, 5 quoted words) before the bystander's navigation.
            var ahead = 0
            while true {
                let line = try await monitor.readLine()
                guard line.contains("\"EVALSHA\"") else { continue }
                if line.contains("\"next\"") { break }
                if line.contains(":who:talk\"") && line.components(separatedBy: "\" \"").count == 5 { ahead += 1 }
            }
            // Outbox.pendingLimit: a client waits for at most 32 engine replies at once. Before,
            // 2,048 went ahead (256 KiB of replies counted at 128 bytes each).
            #expect(ahead >= 1 && ahead <= 32, "\(ahead) of the flooder's scripts reached Redis before the bystander's NEXT")
            #expect(try await bystander.readLine().hasPrefix("OK page=2"))
            try await flooder.sendWhileReading(Array("PING end\n".utf8))
            for i in 0..<count {
                let reply = try await flooder.readReply()  // the bystander's PAGE comes among them
                guard reply.header.raw.hasPrefix("OK ROOMS 1"), reply.lines.count == 1, reply.lines[0].hasPrefix("talk ") else {
                    throw HarnessError("ROOMS \(i) of \(count): \(reply)")
                }
            }
            #expect(flooder.takeSkippedEvents().count == 1, "the bystander's one change")
            #expect(try await flooder.readReply().header.raw == "OK PONG end")
        }
    }

    @Test("30 clients on three daemons send NEXT IF <v> at once: exactly one OK, 29 ERR 409")
    func conditionalRaceAcrossDaemons() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(3, workspace, redis)
            var clients: [LineClient] = []
            var version = ""
            for i in 0..<30 {
                let (c, hello) = try await ds[i % 3].join()
                version = hello.fields["version"] ?? ""
                clients.append(c)
            }
            let expected = version
            try await withThrowingTaskGroup(of: Void.self) { group in
                for c in clients { group.addTask { try await c.send("NEXT IF \(expected)") } }
                try await group.waitForAll()
            }
            var oks = 0, conflicts = 0
            for c in clients {
                let reply = try await c.readReply()
                if reply.header.kind == "OK" { oks += 1 } else if reply.header.raw.hasPrefix("ERR 409") { conflicts += 1 }
            }
            #expect(oks == 1 && conflicts == 29)
        }
    }

    @Test("Redis killed: changes get ERR 503 while reads work; restarted empty: a new epoch, and changes work again")
    func redisDownAndBack() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(2, workspace, redis)
            let (a, hello) = try await ds[0].join()
            let (b, _) = try await ds[1].join()
            try await a.ok("GOTO 3")
            _ = try await b.expectLine(prefix: "PAGE ")
            try await redis.kill()
            var refused = false
            for _ in 0..<100 where !refused {
                let reply = try await a.command("NEXT")
                refused = reply.header.raw == "ERR 503 state engine unavailable"
                if !refused { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(refused)
            let status = try await a.command("STATUS")
            #expect(status.header.kind == "OK" && status.header.fields["page"] != nil)
            try await redis.start()
            let moved = try await b.retryUntilOK("GOTO 7", attempts: 200)
            #expect(moved != nil, "changes work again once Redis is back")
            var page: ServerLine
            repeat { page = try await a.expectLine(prefix: "PAGE ") } while page.fields["page"] != "7"
            #expect(page.fields["epoch"] != hello.fields["epoch"], "Redis came back without the data: a new epoch")
        }
    }

    @Test("Redis out of memory (maxmemory, noeviction): changes get ERR 507 naming the cause, never OK, nothing moves and followers see nothing; once it has room, changes work again")
    func redisOutOfMemory() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(2, workspace, redis)
            let (a, _) = try await ds[0].join()
            let (follower, _) = try await ds[1].join()
            let before = try await a.ok("GOTO 3")
            _ = try await follower.expectLine(prefix: "PAGE ")
            let admin = try await LineClient.connect(port: redis.port, label: "redis admin")
            for line in ["CONFIG SET maxmemory-policy noeviction", "CONFIG SET maxmemory 1"] {
                try await admin.send(line)
                #expect(try await admin.readLine() == "+OK", "\(line)")
            }
            for command in ["NEXT", "GOTO 7", "NEXT IF \(before.version ?? 0)", "LAST"] {
                let reply = try await a.command(command)
                #expect(reply.header.raw.hasPrefix("ERR 507 state not saved: redis: OOM command not allowed"), "\(command): \(reply.header)")
            }
            let status = try await a.ok("STATUS")
            #expect(status.version == before.version && status.page == before.page, "nothing moved: \(status)")
            let logged = ds[0].stderr.components(separatedBy: "refused a change").count - 1
            #expect(logged == 1, "the refusal is logged once, not per change: \(logged)")
            try await admin.send("CONFIG SET maxmemory 0")
            #expect(try await admin.readLine() == "+OK")
            let ok = try await a.ok("NEXT")
            #expect(ok.version == (before.version ?? 0) + 1 && ok.page == 4, "\(ok)")
            let seen = try await follower.expectLine(prefix: "PAGE ")
            #expect(seen.version == ok.version, "the follower's next state is the next saved one: \(seen)")
            #expect(ds[0].stderr.contains("accepts changes again"), "\(ds[0].stderr)")
        }
    }

    @Test("Redis busy with a long script (BUSY): changes get ERR 503 state engine unavailable, not ERR 507, and work again once it is killed")
    func redisBusyIsAnOutage() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(1, workspace, redis)
            let (a, _) = try await ds[0].join()
            let before = try await a.ok("GOTO 3")
            let admin = try await LineClient.connect(port: redis.port, label: "redis admin")
            try await admin.send("CONFIG SET busy-reply-threshold 50")
            #expect(try await admin.readLine() == "+OK")
            let script = try await LineClient.connect(port: redis.port, label: "redis script")
            try await script.send("EVAL \"while true do end\" 0")
            // Past the threshold Redis answers every other command with -BUSY.
            let busy = try await eventually(attempts: 500) {
                try await admin.send("PING")
                return try await admin.readLine().hasPrefix("-BUSY")
            }
            #expect(busy, "Redis never said BUSY")
            let reply = try await a.command("NEXT")
            #expect(reply.header.raw == "ERR 503 state engine unavailable", "\(reply.header)")
            try await admin.send("SCRIPT KILL")
            #expect(try await admin.readLine() == "+OK")
            let ok = try await eventually(attempts: 500) { try await a.command("NEXT").header.kind == "OK" }
            #expect(ok, "changes work again once the script is killed")
            let status = try await a.ok("STATUS")
            #expect(status.version == (before.version ?? 0) + 1 && status.page == 4, "one change, after the kill: \(status)")
            script.close()
        }
    }

    @Test("nine writers on three daemons: every follower sees versions strictly increasing, ending at the last")
    func orderedVersionsWithNineWriters() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(3, workspace, redis)
            var followers: [LineClient] = []
            for d in ds { followers.append(try await d.join().0) }
            var writers: [LineClient] = []
            for i in 0..<9 { writers.append(try await ds[i % 3].join().0) }
            let fixed = writers
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, w) in fixed.enumerated() {
                    group.addTask {
                        for n in 0..<20 { _ = try await w.command("GOTO \((i + n) % 10 + 1)") }
                    }
                }
                try await group.waitForAll()
            }
            let final = try await writers[0].command("STATUS")
            let last = UInt64(final.header.fields["version"] ?? "") ?? 0
            for f in followers {
                var seen: UInt64 = 0
                while seen < last {
                    let page = try await f.expectLine(prefix: "PAGE ")
                    let v = UInt64(page.fields["version"] ?? "") ?? 0
                    #expect(v > seen, "versions go only up: \(v) after \(seen)")
                    seen = v
                }
                #expect(seen == last)
            }
        }
    }

    @Test("every daemon restarted: the rooms keep their page, version and epoch")
    func restartKeepsState() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(3, workspace, redis)
            let (a, _) = try await ds[0].join()
            let ok = try await a.ok("GOTO 6")
            let before = try await a.command("STATUS").header
            for d in ds {
                d.send(signal: SIGTERM)
                _ = try await d.waitForExit(timeout: .seconds(10))
            }
            let again = try await daemons(3, workspace, redis)
            for d in again {
                let (_, hello) = try await d.join()
                #expect(hello.fields["page"] == "6" && hello.fields["version"] == ok.fields["version"])
                #expect(hello.fields["epoch"] == before.fields["epoch"])
            }
        }
    }

    @Test("NAME, AUTH and JOIN on one daemon reach another daemon's WHO: each changes what the room's members look like there")
    func presenceFollowsNameAuthAndJoin() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            try workspace.write("talk.txt", Self.doc)
            try workspace.write("notes.txt", Self.doc)
            var ds: [Daemon] = []
            for i in 0..<2 {
                ds.append(try await workspace.startDaemon(documents: ["talk.txt", "notes.txt"], arguments: [
                    "--redis", redis.url, "--redis-prefix", "p\(ProcessInfo.processInfo.processIdentifier):",
                    "--state-dir", workspace.url("s\(i)").path, "--token", "s3cret"]))
            }
            let (a, _) = try await ds[0].join()
            let (b, _) = try await ds[1].join()
            /// b's WHO, asked until `done` holds for its lines (members are shared within half a second).
            func whoAtB(until done: ([String]) -> Bool) async throws -> [String] {
                var who = try await b.command("WHO")
                let start = ContinuousClock.now
                while !done(who.lines) && ContinuousClock.now - start < .seconds(10) {
                    try await Task.sleep(for: .milliseconds(100))
                    who = try await b.command("WHO")
                }
                return who.lines
            }
            // Both listed first, so the rename below is a change to a list already shared.
            var lines = try await whoAtB { $0.count == 2 }
            #expect(lines.count == 2, "a reached b: \(lines)")
            try await a.ok("NAME ann")
            lines = try await whoAtB { $0.contains("ann control=no view=follow hand=down you=no") }
            #expect(lines.contains("ann control=no view=follow hand=down you=no"), "a's new name reached b: \(lines)")
            try await a.ok("AUTH s3cret")
            lines = try await whoAtB { $0.contains("ann control=yes view=follow hand=down you=no") }
            #expect(lines.contains("ann control=yes view=follow hand=down you=no"), "a's control reached b: \(lines)")
            try await a.ok("JOIN notes")
            lines = try await whoAtB { !$0.contains { $0.hasPrefix("ann ") } }
            #expect(lines.count == 1 && !lines.contains { $0.hasPrefix("ann ") }, "a left talk at b: \(lines)")
            try await b.ok("JOIN notes")
            lines = try await whoAtB { $0.contains("ann control=no view=follow hand=down you=no") }
            #expect(lines.contains("ann control=no view=follow hand=down you=no") && lines.count == 2, "a is in notes, its control reset by JOIN: \(lines)")
        }
    }

    @Test("one daemon killed: the others keep working, and its clients leave WHO within 30 s")
    func oneDaemonKilled() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let ds = try await daemons(3, workspace, redis)
            let (a, _) = try await ds[0].join()
            let (b, _) = try await ds[1].join()
            let (c, _) = try await ds[2].join()
            var who = try await a.command("WHO")
            for _ in 0..<100 where who.lines.count != 3 {
                try await Task.sleep(for: .milliseconds(50))
                who = try await a.command("WHO")
            }
            #expect(who.lines.count == 3)
            ds[2].kill9()
            try await a.ok("NEXT")
            _ = try await b.expectLine(prefix: "PAGE ")
            let start = ContinuousClock.now
            while who.lines.count != 2 && ContinuousClock.now - start < .seconds(30) {
                try await Task.sleep(for: .milliseconds(500))
                who = try await a.command("WHO")
            }
            #expect(who.lines.count == 2, "the killed daemon's client left WHO: \(who)")
            c.close()
        }
    }
}
