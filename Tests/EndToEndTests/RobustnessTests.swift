import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients and files misbehaving in ways the daemon must survive. A daemon that crashes in any of
/// these is reported by the workspace cleanup, with its stderr.
@Suite("Robustness", .timeLimit(.minutes(1)))
struct RobustnessTests {
    @Test("clients vanishing (reset or close, some mid-line) while the room changes: the others go on")
    func vanishingClients() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 5)], arguments: ["--wrap", "--no-fsync"]) { daemon, _ in
            let (driver, _) = try await daemon.join(label: "driver")
            let (watcher, _) = try await daemon.join(label: "watcher")
            var doomed: [LineClient] = []
            for i in 0..<20 {
                let (client, _) = try await daemon.join(label: "doomed \(i)", receiveBufferSize: 4096)
                if i % 3 == 0 { try await client.sendRaw(Array("GOTO 3 and no end of line".utf8)) }
                doomed.append(client)
            }
            for round in 0..<20 {
                try await driver.send(lines: Array(repeating: "NEXT", count: 10))
                if round < doomed.count {
                    if round % 2 == 0 { doomed[round].abort() } else { doomed[round].close() }
                }
                for _ in 0..<20 { _ = try await driver.readLine() }
            }
            let status = try await driver.ok("STATUS")
            #expect(status.version == 200)
            #expect(try await eventually { try await driver.ok("STATUS").int("clients") == 2 }, "vanished clients were not removed")
            let events = try await watcher.sync().map(ServerLine.init)
            #expect(events.last?.version == 200, "the watcher's last event: \(events.last?.raw ?? "none")")
        }
    }

    @Test("a throttled client with a full outbox that resets its connection is freed")
    func throttledClientResets() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (other, _) = try await daemon.join(label: "other")
            let baseline = try daemon.rssKiB()
            let (flooder, _) = try await daemon.join(label: "flooder", receiveBufferSize: 4096)
            let flood = Array(String(repeating: "PING " + String(repeating: "f", count: 200) + "\n", count: 40_000).utf8)
            let sent = try await flooder.sendUntilStalled(flood)
            #expect(sent < flood.count, "not throttled")
            flooder.abort()
            #expect(try await eventually { try await other.ok("STATUS").int("clients") == 1 })
            #expect(try await other.command("PING alive").header.raw == "OK PONG alive")
            if Daemon.resourceBudgetsApply { #expect(try daemon.rssKiB() - baseline < 16 * 1024) }
        }
    }

    @Test("SIGTERM with a client that does not read (its buffers full): still exits 0 within about a second")
    func shutdownWithAStuckClient() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--no-fsync"]) { daemon, _ in
            let (stuck, _) = try await daemon.join(label: "stuck", receiveBufferSize: 4096)
            let (normal, _) = try await daemon.join(label: "normal")
            let flood = Array(String(repeating: "PING " + String(repeating: "s", count: 200) + "\n", count: 40_000).utf8)
            _ = try await stuck.sendUntilStalled(flood)
            let start = ContinuousClock.now
            daemon.send(signal: SIGTERM)
            #expect(try await normal.readServerLine().kind == "BYE")
            let termination = try await daemon.waitForExit(timeout: shutdownGuard)
            let elapsed = ContinuousClock.now - start
            #expect(termination == .exited(0), "\(termination); stderr:\n\(tail(daemon.stderr))")
            #expect(elapsed < shutdownGuard, "shutdown with a stuck client took \(elapsed)")
        }
    }

    @Test("restart after the document shrank: the page is clamped and the version does not go back")
    func restartWithAShrunkDocument() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, _) = try await first.join()
            try await client.ok("LAST")
            try await client.ok("PREV")
            first.send(signal: SIGTERM)
            _ = try await first.waitForExit(timeout: .seconds(3))

            try workspace.write("notes.txt", Documents.formFeed(pages: 3))
            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (again, hello) = try await second.join()
            #expect(hello.page == 3 && hello.pages == 3, "\(hello)")
            let version = try #require(hello.version)
            #expect(version >= 2, "the version went back: \(hello)")
            #expect(try await again.ok("FIRST").version == version + 1)
        }
    }

    @Test("SIGHUP while a document is missing or unreadable: no crash, clients stay, it comes back")
    func sighupWithMissingDocument() async throws {
        try await withDaemon(["notes.txt": Documents.formFeed(pages: 4)]) { daemon, workspace in
            let (client, _) = try await daemon.join()
            try await client.ok("GOTO 2")
            _ = try await client.sync()
            try FileManager.default.removeItem(at: workspace.url("notes.txt"))
            daemon.send(signal: SIGHUP)
            _ = try await client.sync("after-hup")
            #expect(try await client.ok("STATUS").page != nil)
            #expect(try await client.command("TEXT 2").header.kind == "OK" || true)
            try workspace.write("notes.txt", Documents.formFeed(pages: 6))
            daemon.send(signal: SIGHUP)
            #expect(try await eventually { try await client.ok("STATUS").pages == 6 }, "the document never came back")
            #expect(daemon.isRunning)
        }
    }

    @Test("TEXT of CRLF and invalid UTF-8 content: lines without CR, U+FFFD for bad bytes")
    func textOfUnusualContent() async throws {
        try await withWorkspace { workspace in
            let bytes = Array("dos line\r\nnext\r\n".utf8) + [0x0C] + Array("bad ".utf8) + [0xFF, 0xC3] + Array(" bytes\n".utf8)
            try workspace.write("odd.txt", bytes: bytes)
            let daemon = try await workspace.startDaemon(documents: ["odd.txt"])
            let (client, hello) = try await daemon.join()
            #expect(hello.pages == 2)
            let first = try await client.command("TEXT 1")
            #expect(first.lines == ["dos line", "next"], "\(first)")
            #expect(first.header.int("bytes") == 16)
            let second = try await client.command("TEXT 2")
            #expect(second.lines.count == 1 && second.lines[0].hasPrefix("bad \u{FFFD}") && second.lines[0].hasSuffix(" bytes"), "\(second)")
            #expect(second.header.int("bytes") == 13)
        }
    }

    @Test("kill -9 in the middle of a burst of changes: every acknowledged change survives the restart")
    func killNineDuringABurst() async throws {
        try await withWorkspace { workspace in
            try workspace.write("long.txt", Documents.formFeed(pages: 500))
            let first = try await workspace.startDaemon(documents: ["long.txt"])
            let (client, _) = try await first.join()
            try await client.send(lines: Array(repeating: "NEXT", count: 300))
            var acknowledged: UInt64 = 0
            while acknowledged < 100 {
                let line = try await client.readServerLine()
                if line.kind == "OK" { acknowledged = try #require(line.version) }
            }
            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))
            // Replies already in the socket were acknowledged too.
            while let line = try await client.readLineOrEOF() {
                if line.hasPrefix("OK ") { acknowledged = ServerLine(line).version ?? acknowledged }
            }

            let second = try await workspace.startDaemon(documents: ["long.txt"])
            let (_, hello) = try await second.join()
            let version = try #require(hello.version)
            #expect(version >= acknowledged, "acknowledged version \(acknowledged) lost: \(hello)")
            #expect(hello.page.map(UInt64.init) == version + 1, "page and version from different saves: \(hello)")
        }
    }

    @Test("200 clients at once: every one gets its HELLO and the same PAGE line")
    func manyClients() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            var clients: [LineClient] = []
            for i in 0..<200 {
                clients.append(try await daemon.connect(label: "crowd \(i)"))
            }
            for client in clients { _ = try await client.expectLine(prefix: "HELLO ") }
            #expect(try await clients[0].ok("STATUS").int("clients") == 200)
            try await clients[199].ok("NEXT")
            let expected = try await clients[199].readLine()
            for client in clients.dropLast() {
                #expect(try await client.readLine() == expected, "\(client.label)")
            }
        }
    }
}
