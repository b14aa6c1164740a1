import Foundation
import Testing

/// What daemons sharing rooms through a real redis-server do when Redis misbehaves: restarted
/// with or without its data, paused, its keys changed by someone else, versions beyond what Lua's
/// numbers hold. Each test has its own redis-server and daemons.
@Suite struct RedisFailureTests {
    private static let doc = (1...10).map { "page \($0)" }.joined(separator: "\u{0C}")
    private static let prefix = "f\(ProcessInfo.processInfo.processIdentifier):"
    private static let key = "\(prefix)room:talk"

    private func daemon(_ i: Int, _ workspace: Workspace, _ redis: RedisServer, file: String = "talk.txt") async throws -> Daemon {
        if !FileManager.default.fileExists(atPath: workspace.url(file).path) { try workspace.write(file, Self.doc) }
        return try await workspace.startDaemon(documents: [file], arguments: [
            "--redis", redis.url, "--redis-prefix", Self.prefix, "--state-dir", workspace.url("s\(i)").path])
    }

    /// A redis-server and two daemons sharing the room through it.
    private func twoDaemons(_ workspace: Workspace) async throws -> (RedisServer, Daemon, Daemon) {
        let redis = try await RedisServer(in: workspace)
        return (redis, try await daemon(0, workspace, redis), try await daemon(1, workspace, redis))
    }

    /// Reads `PAGE` lines until one has `version`; fails on a version that goes back or skips it.
    private func expectPage(_ client: LineClient, version: UInt64) async throws -> ServerLine {
        while true {
            let page = try await client.expectLine(prefix: "PAGE ")
            let v = try #require(page.version, "\(page)")
            if v == version { return page }
            #expect(v < version, "PAGE version \(v) passed \(version) without it: \(page)")
        }
    }

    @Test("versions beyond 2^53 stay exact (Lua's numbers are doubles): each change adds exactly one, a document recorded at start too, and 2^64-1 refuses changes with ERR 500")
    func versionsBeyondDoublePrecision() async throws {
        try await withWorkspace { workspace in
            let (redis, d0, d1) = try await twoDaemons(workspace)
            let (a, _) = try await d0.join()
            let (follower, _) = try await d1.join()
            // As after an import or years of changes: the room's version just below 2^53.
            #expect(try await redis.command("HSET \(Self.key) version 9007199254740991") == ":0")
            for expected: UInt64 in [9_007_199_254_740_992, 9_007_199_254_740_993] {
                let ok = try await a.ok("NEXT")
                #expect(ok.version == expected, "\(ok)")
                #expect(try await expectPage(follower, version: expected).version == expected)
            }
            // A daemon with another file for the room records its document: one more version.
            try FileManager.default.createDirectory(at: workspace.url("other"), withIntermediateDirectories: true)
            try workspace.write("other/talk.txt", "another text\u{0C}with two pages")
            let d2 = try await daemon(2, workspace, redis, file: "other/talk.txt")
            let (_, hello) = try await d2.join()
            #expect(hello.version == 9_007_199_254_740_994, "\(hello)")
            #expect(try await expectPage(follower, version: 9_007_199_254_740_994).version == 9_007_199_254_740_994)
            #expect(try await redis.command("HGET \(Self.key) version") == "9007199254740994")
            let next = try await a.ok("PREV")
            #expect(next.version == 9_007_199_254_740_995, "\(next)")

            // The last version: one more change reaches it, the next is refused and nothing moves.
            #expect(try await redis.command("HSET \(Self.key) version 18446744073709551614") == ":0")
            let last = try await a.ok("NEXT")
            #expect(last.version == UInt64.max, "\(last)")
            #expect(try await expectPage(follower, version: UInt64.max).version == UInt64.max)
            let refused = try await a.command("NEXT")
            #expect(refused.header.raw.hasPrefix("ERR 500 version limit reached"), "\(refused.header)")
            #expect(refused.header.version == UInt64.max && refused.header.page == last.page, "\(refused.header)")
            #expect(try await a.ok("GOTO \(last.page ?? 0)").version == UInt64.max, "staying on the page is still OK")
            #expect(try await redis.command("HGET \(Self.key) version") == "18446744073709551615")
            #expect(try await follower.ok("STATUS").version == UInt64.max)
        }
    }

    @Test("Redis paused (SIGSTOP) past every limit: a change waiting on it gets ERR 503 instead of hanging, the same client's STATUS after it and other clients' reads are answered; after SIGCONT changes work again without a restart and every daemon agrees with Redis")
    func redisPaused() async throws {
        try await withWorkspace { workspace in
            let (redis, d0, d1) = try await twoDaemons(workspace)
            let (a, _) = try await d0.join()
            let (reader, _) = try await d0.join()
            let (follower, _) = try await d1.join()
            let before = try await a.ok("GOTO 3")
            _ = try await expectPage(follower, version: before.version ?? 0)
            redis.send(signal: SIGSTOP)
            // The change is sent to a Redis that holds the connection open and never answers.
            try await a.send("NEXT")
            try await a.send("STATUS")
            let refused = try await a.readReply()
            #expect(refused.header.raw == "ERR 503 state engine unavailable", "\(refused.header)")
            let status = try await a.readReply()
            #expect(status.header.kind == "OK" && status.header.page == 3 && status.header.version == before.version, "\(status.header)")
            #expect(try await reader.command("TEXT").lines.joined().contains("page 3"))
            #expect(try await reader.command("NEXT").header.raw == "ERR 503 state engine unavailable")
            // The other daemon learns it from its own first change.
            #expect(try await follower.ok("STATUS").page == 3)
            #expect(try await follower.command("NEXT").header.raw == "ERR 503 state engine unavailable")
            for d in [d0, d1] {
                #expect(d.stderr.components(separatedBy: "unavailable: no answer within 3 s").count == 2, "logged once: \(d.stderr)")
            }

            redis.send(signal: SIGCONT)
            let moved = try await follower.retryUntilOK("GOTO 7", refusal: "ERR 503 state engine unavailable")
            let ok = try #require(moved, "changes work again once Redis runs")
            // What Redis holds is what every daemon serves: no OK for a change it did not store.
            #expect(try await redis.command("HGET \(Self.key) version") == String(ok.version ?? 0))
            #expect(try await redis.command("HGET \(Self.key) page") == "7")
            let agreed = try await eventually(attempts: 250) {
                let s = try await a.ok("STATUS")
                return s.version == ok.version && s.page == 7
            }
            #expect(agreed, "the first daemon serves the shared state again")
        }
    }

    @Test("Redis restarted from an older snapshot (kill -9 after SAVE, as with the default RDB persistence): the room gets a new epoch holding the last state the daemons served, never an older version of the old epoch")
    func redisRestartedFromOlderSnapshot() async throws {
        try await withWorkspace { workspace in
            let (redis, d0, d1) = try await twoDaemons(workspace)
            let (a, hello) = try await d0.join()
            let (follower, _) = try await d1.join()
            let epoch = try #require(hello.fields["epoch"])
            try await a.ok("GOTO 2")
            #expect(try await redis.command("SAVE") == "+OK")
            try await a.ok("GOTO 4")
            let last = try await a.ok("GOTO 5")
            _ = try await expectPage(follower, version: last.version ?? 0)
            try await redis.kill()
            try await redis.start()

            // Redis came back at page 2, version 1 of the same epoch (the daemons may have mended
            // it already, so it is not read here); once they are back the room is page 5 at
            // version 3 again, in a new epoch.
            var page: ServerLine
            repeat { page = try await follower.expectLine(prefix: "PAGE ") } while page.fields["epoch"] == epoch
            #expect(page.page == 5 && page.version == last.version, "the last state served, in a new epoch: \(page)")
            let newEpoch = try #require(page.fields["epoch"])
            let moved = try await a.retryUntilOK("NEXT", refusal: "ERR 503 state engine unavailable")
            let ok = try #require(moved)
            #expect(ok.page == 6 && ok.version == (last.version ?? 0) + 1, "the next change goes on from the last served state: \(ok)")
            let seen = try await expectPage(follower, version: ok.version ?? 0)
            #expect(seen.fields["epoch"] == newEpoch && seen.page == 6, "\(seen)")
            #expect(try await redis.command("HGET \(Self.key) epoch") == newEpoch)
            let logged = [d0, d1].map { $0.stderr.components(separatedBy: "(it lost changes)").count - 1 }
            #expect(logged.reduce(0, +) == 1, "one daemon makes the new epoch and logs it: \(logged)")
        }
    }

    @Test("Redis with appendonly yes killed and restarted: nothing acknowledged is lost, the epoch and versions go on")
    func redisRestartedWithAppendOnly() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace, persistence: ["--save", "", "--appendonly", "yes"])
            let d0 = try await daemon(0, workspace, redis)
            let d1 = try await daemon(1, workspace, redis)
            let (a, hello) = try await d0.join()
            let (follower, _) = try await d1.join()
            let last = try await a.ok("GOTO 5")
            _ = try await expectPage(follower, version: last.version ?? 0)
            try await redis.kill()
            try await redis.start()
            let moved = try await follower.retryUntilOK("NEXT")
            let ok = try #require(moved)
            #expect(ok.page == 6 && ok.version == (last.version ?? 0) + 1, "\(ok)")
            let seen = try await expectPage(a, version: ok.version ?? 0)
            #expect(seen.fields["epoch"] == hello.fields["epoch"], "the same history: \(seen)")
            #expect(!(d0.stderr + d1.stderr).contains("lost changes"))
        }
    }

    /// Sends `command` until it is answered OK (each other answer must be ERR 503), returning the OK.
    private func okOnceBack(_ client: LineClient, _ command: String) async throws -> ServerLine {
        for _ in 0..<400 {
            let reply = try await client.command(command)
            if reply.header.kind == "OK" { return reply.header }
            #expect(reply.header.raw == "ERR 503 state engine unavailable", "\(reply.header)")
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("\(command) never answered OK")
    }

    @Test("the room's key overwritten while daemons run (a version that is no number, another type, an older version, FLUSHALL): ERR 507 naming the key and logged once, never a nonsense version; deleted or lost, the room starts again in a new epoch")
    func roomKeyOverwritten() async throws {
        try await withWorkspace { workspace in
            let (redis, d0, d1) = try await twoDaemons(workspace)
            let (a, hello) = try await d0.join()
            let (follower, _) = try await d1.join()
            let start = try await a.ok("GOTO 3")
            let notARoom = "ERR 507 state not saved: redis: \(Self.key) does not hold a pagesync room"
            #expect(try await redis.command("HSET \(Self.key) version abc") == ":0")
            for command in ["NEXT", "GOTO 7"] {
                let reply = try await follower.command(command)
                #expect(reply.header.raw.hasPrefix(notARoom), "\(command): \(reply.header)")
            }
            #expect(try await a.ok("STATUS").version == start.version)
            #expect(d1.stderr.components(separatedBy: "does not hold a pagesync room").count == 2, "logged once: \(d1.stderr)")
            #expect(try await redis.command("SET \(Self.key) garbage") == "+OK")
            #expect(try await a.command("NEXT").header.raw.hasPrefix(notARoom))

            // Deleted: the next changes start it again, in a new epoch, from the last state served.
            #expect(try await redis.command("DEL \(Self.key)") == ":1")
            let again = try await okOnceBack(a, "NEXT")
            #expect(again.page == 4, "\(again)")
            var page: ServerLine
            repeat { page = try await follower.expectLine(prefix: "PAGE ") } while page.version != again.version
            #expect(page.fields["epoch"] != hello.fields["epoch"] && page.page == 4, "\(page)")
            let epoch = page.fields["epoch"]

            // Set back to an older version of the same epoch: not gone on from, a new epoch again.
            #expect(try await redis.command("HSET \(Self.key) version 0") == ":0")
            let after = try await okOnceBack(a, "NEXT")
            #expect(after.page == 5 && after.version == (again.version ?? 0) + 1, "\(after)")
            repeat { page = try await follower.expectLine(prefix: "PAGE ") } while page.version != after.version
            #expect(page.fields["epoch"] != epoch && page.page == 5, "\(page)")

            // Everything flushed.
            #expect(try await redis.command("FLUSHALL") == "+OK")
            let flushed = try await okOnceBack(follower, "NEXT")
            #expect(flushed.page == 6 && flushed.version == (after.version ?? 0) + 1, "\(flushed)")
            #expect(try await redis.command("HGET \(Self.key) version") == String(flushed.version ?? 0))
        }
    }
}
