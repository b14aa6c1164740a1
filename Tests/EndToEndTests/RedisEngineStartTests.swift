import Foundation
import Testing

/// The Redis engine at start: Redis not running yet, a bad URL, and daemons whose files differ.
@Suite(.serialized) struct RedisEngineStartTests {
    private static let ten = (1...10).map { "page \($0) of ten" }.joined(separator: "\u{0C}")
    private static let three = (1...3).map { "page \($0) of three" }.joined(separator: "\u{0C}")

    private func prefix() -> String { "s\(ProcessInfo.processInfo.processIdentifier):" }

    @Test("started while Redis is down: clients are served and changes get ERR 503; once Redis is up the next change succeeds")
    func startWithRedisDown() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace, startNow: false)
            try workspace.write("talk.txt", Self.ten)
            let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: ["--redis", redis.url, "--redis-prefix", prefix()])
            let (a, hello) = try await daemon.join()
            #expect(hello.fields["page"] == "1")
            let refused = try await a.command("NEXT")
            #expect(refused.header.raw == "ERR 503 state engine unavailable")
            let status = try await a.command("STATUS")
            #expect(status.header.kind == "OK" && status.header.fields["page"] == "1", "reads are answered locally: \(status)")
            let text = try await a.command("TEXT 2")
            #expect(text.lines.joined().contains("page 2 of ten"), "\(text)")
            let who = try await a.command("WHO")
            #expect(who.header.kind == "OK" && who.lines.count == 1, "\(who)")
            // Reconnect attempts back off to 5 s at most, and the outage is logged once.
            try await Task.sleep(for: .seconds(1))
            try await redis.start()
            let moved = try await a.retryUntilOK("NEXT", refusal: "ERR 503 state engine unavailable")
            let ok = try #require(moved, "a change succeeds once Redis is up")
            #expect(ok.fields["page"] == "2")
            let shared = try await a.command("STATUS").header
            // The room now lives in Redis: a second daemon starts on the shared page.
            let second = try await workspace.startDaemon(documents: ["talk.txt"], arguments: [
                "--redis", redis.url, "--redis-prefix", prefix(), "--state-dir", workspace.url("s2").path])
            let (b, hello2) = try await second.join()
            #expect(hello2.fields["page"] == "2" && hello2.fields["version"] == ok.fields["version"])
            // Redis had no such room: it was created from what the daemon served, epoch included.
            #expect(hello2.fields["epoch"] == shared.fields["epoch"] && hello2.fields["epoch"] == hello.fields["epoch"])
            try await b.ok("GOTO 5")
            var page: ServerLine
            repeat { page = try await a.expectLine(prefix: "PAGE ") } while page.fields["page"] != "5"
            let log = daemon.stderr
            #expect(log.components(separatedBy: "unavailable at start").count == 2, "one line at start:\n\(log)")
            #expect(!log.contains("unavailable:"), "no second outage line:\n\(log)")
            #expect(log.contains("is back after"), "\(log)")
        }
    }

    @Test("a Redis URL that is not one: one line naming it, and the daemon does not start")
    func invalidURL() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Self.ten)
            let bin = try Binaries.pagesyncd()
            let result = try await runPagerTestProcess(bin, [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
                "--redis", "http://127.0.0.1:6379", workspace.url("talk.txt").path,
            ], in: workspace)
            #expect(result.status != 0)
            #expect(result.output.contains("redis: \"http://127.0.0.1:6379\" is not a redis:// or unix:// URL"), "\(result.output)")
            #expect(!result.output.contains("listening on"), "\(result.output)")
        }
    }

    @Test("a daemon whose file differs from the room's doc in Redis logs it and serves its own text, the shared page clamped")
    func differentDocument() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            for dir in ["short", "long"] {
                try FileManager.default.createDirectory(at: workspace.url(dir), withIntermediateDirectories: true)
            }
            try workspace.write("short/talk.txt", Self.three)
            try workspace.write("long/talk.txt", Self.ten)
            // The short file's daemon starts first; the long one's start records its document.
            let short = try await workspace.startDaemon(documents: ["short/talk.txt"], arguments: [
                "--redis", redis.url, "--redis-prefix", prefix(), "--state-dir", workspace.url("s1").path])
            let (s, _) = try await short.join()
            let long = try await workspace.startDaemon(documents: ["long/talk.txt"], arguments: [
                "--redis", redis.url, "--redis-prefix", prefix(), "--state-dir", workspace.url("s2").path])
            let (l, longHello) = try await long.join()
            #expect(longHello.fields["pages"] == "10")
            let ok = try await l.ok("GOTO 8")
            #expect(ok.fields["page"] == "8" && ok.fields["pages"] == "10")
            var page: ServerLine
            repeat { page = try await s.expectLine(prefix: "PAGE ") } while page.fields["version"] != ok.fields["version"]
            #expect(page.fields["page"] == "3" && page.fields["pages"] == "3", "the shared page 8 clamped to 3: \(page)")
            let text = try await s.command("TEXT")
            #expect(text.lines.joined().contains("page 3 of three"), "its own text: \(text)")
            let longDoc = try #require(try await l.command("STATUS").header.fields["doc"])
            let shortDoc = try #require(page.fields["doc"])
            #expect(shortDoc != longDoc, "each daemon names its own document")
            let log = short.stderr
            #expect(log.contains("room talk: the shared state is for document \(longDoc), this daemon has \(shortDoc); serving this daemon's text with the shared page clamped to 3"), "\(log)")
            // Logged once per foreign document, not once per change.
            let again = try await l.ok("GOTO 9")
            repeat { page = try await s.expectLine(prefix: "PAGE ") } while page.fields["version"] != again.fields["version"]
            #expect(short.stderr.components(separatedBy: "the shared state is for document").count == 2)
            #expect(!long.stderr.contains("the shared state is for document"), "the long daemon's file is the room's")
        }
    }

    /// The config file for ``reloadKeepsTheRunningEngine()``: `engine` lines for one talk room.
    private static func engineConfig(_ workspace: Workspace, _ engineLines: String) -> String {
        """
        listen: "127.0.0.1:0"
        state-dir: "\(workspace.stateDir.path)"
        \(engineLines)
        rooms: [talk]
        room:
          talk:
            file: talk.txt
        """
    }

    /// Waits until the daemon has logged `reloaded:` `count` times.
    @Test("SIGHUP changing redis, redis-prefix or engine: each logs that it needs a restart, and the running engine goes on")
    func reloadKeepsTheRunningEngine() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            let other = try await RedisServer(in: workspace, startNow: false)
            try workspace.write("talk.txt", Self.ten)
            let running = "r\(prefix())"
            let config = try workspace.write("pagesyncd.yaml", Self.engineConfig(workspace, """
                engine: redis
                redis: "\(redis.url)"
                redis-prefix: "\(running)"
                """))
            let daemon = try await workspace.startDaemon(arguments: ["--config", config.path], addDefaults: false)
            #expect(daemon.stderr.contains("state in redis \(redis.url), keys \(running)*"), "\(daemon.stderr)")
            let (client, _) = try await daemon.join()
            #expect(try await client.ok("GOTO 3").page == 3)

            // Another Redis and another prefix: both named, with what still runs.
            try workspace.write("pagesyncd.yaml", Self.engineConfig(workspace, """
                engine: redis
                redis: "\(other.url)"
                redis-prefix: "elsewhere:"
                """))
            daemon.send(signal: SIGHUP)
            try await daemon.waitForReload(count: 1)
            var log = daemon.stderr
            #expect(log.contains("reload: redis changes need a restart; still \(redis.url)"), "\(log)")
            #expect(log.contains("reload: redis-prefix changes need a restart; still \(running)"), "\(log)")

            // The journal instead of Redis.
            try workspace.write("pagesyncd.yaml", Self.engineConfig(workspace, "engine: journal"))
            daemon.send(signal: SIGHUP)
            try await daemon.waitForReload(count: 2)
            log = daemon.stderr
            #expect(log.contains("reload: engine changes need a restart; still redis"), "\(log)")

            // Changes still go to the Redis and prefix the daemon started with.
            let moved = try await client.ok("NEXT")
            #expect(moved.page == 4)
            let second = try await workspace.startDaemon(documents: ["talk.txt"], arguments: [
                "--redis", redis.url, "--redis-prefix", running, "--state-dir", workspace.url("s2").path])
            let (_, hello) = try await second.join()
            #expect(hello.page == 4 && hello.version == moved.version, "\(hello)")
        }
    }
}
