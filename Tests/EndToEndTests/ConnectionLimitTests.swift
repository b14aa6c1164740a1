import Foundation
import PageSyncCore
import Testing

/// Limits on connections: per address, idle time, and bounded WHO replies.
@Suite("Connection limits and WHO paging", .timeLimit(.minutes(2)))
struct ConnectionLimitTests {
    static let talk: KeyValuePairs<String, String> = ["talk.txt": "one\u{0C}two\u{0C}three"]

    @Test("past max-clients-per-address a connection gets ERR 503 and is closed; silent half-open ones count; a freed slot is reused")
    func perAddressLimit() async throws {
        try await withDaemon(Self.talk, arguments: ["--max-clients-per-address", "3"]) { daemon, _ in
            let (first, _) = try await daemon.join(label: "first")
            // Two slowloris clients: connected, half a line sent, never finished.
            let slow1 = try await daemon.connect(label: "slow-1")
            let slow2 = try await daemon.connect(label: "slow-2")
            try await slow1.sendRaw(Array("NEX".utf8))
            try await slow2.sendRaw(Array("G".utf8))
            let fourth = try await daemon.connect(label: "fourth")
            let refused = try await fourth.readServerLine()
            #expect(refused.raw == "ERR 503 too many connections from your address (3)", "\(refused)")
            try await fourth.expectClosed()
            #expect(try await first.ok("STATUS").int("clients") == 3, "the slowloris connections are clients too")
            slow1.close()
            let reusable = try await eventually {
                let c = try await daemon.connect(label: "again")
                defer { c.close() }
                return try await c.readServerLine().kind == "HELLO"
            }
            #expect(reusable, "a closed connection frees its slot")
        }
    }

    @Test("an open-file limit too low for max-clients caps them, with one warning line: past the cap a connection gets ERR 503 server full, not a silent close")
    func openFileLimitCapsMaxClients() async throws {
        try await withWorkspace { workspace in
            let documents = ["one.txt", "two.txt", "three.txt"]
            for name in documents { try workspace.write(name, "a\u{0C}b") }
            // 64 descriptors: 32 kept for the daemon and 2 for each of the 3 rooms' documents
            // leave 26 clients. Uncapped, the daemon accepted until libuv hit EMFILE and then
            // closed the rest without a word.
            let daemon = try await workspace.startDaemon(documents: documents, openFileLimit: 64)
            let expected = 64 - OpenFileBudget.reserved - OpenFileBudget.perRoom * documents.count
            var clients: [LineClient] = []
            defer { for client in clients { client.close() } }
            var greeted = 0
            var refused = 0
            for i in 0..<60 {
                let client = try await daemon.connect(label: "client-\(i)")
                clients.append(client)
                let line = try await client.readLineOrEOF()
                if line?.hasPrefix("HELLO ") == true {
                    greeted += 1
                } else {
                    #expect(line == "ERR 503 server full", """
                        client \(i) (port \(client.localPort)) got \(line ?? "EOF") instead of HELLO or ERR 503; \
                        the daemon holds \(daemon.openDescriptors()); its log on that port: \
                        \(daemon.stderr.split(separator: "\n").filter { $0.contains(":\(client.localPort)") })
                        """)
                    if line == "ERR 503 server full" { refused += 1 }
                }
            }
            #expect(greeted == expected)
            #expect(refused == 60 - greeted)
            #expect(daemon.stderr.contains(
                "max-clients 10000 needs \(10_000 + 64 - expected) open files, but the limit is 64: serving at most \(expected) client(s) (raise LimitNOFILE= or ulimit -n)"),
                "\(daemon.stderr)")
        }
    }

    @Test("idle-timeout: a silent or slowloris connection gets BYE and is closed; an active one stays")
    func idleTimeout() async throws {
        try await withDaemon(Self.talk, arguments: ["--idle-timeout", "6"]) { daemon, _ in
            let (silent, _) = try await daemon.join(label: "silent")
            let (trickle, _) = try await daemon.join(label: "trickle")
            let trickleConnected = ContinuousClock.now
            let (active, _) = try await daemon.join(label: "active")
            let started = ContinuousClock.now
            // The active client speaks every 200 ms, far inside the 6 s timeout even when the parallel
            // suite keeps this process off the CPU for seconds.
            for i in 0..<35 {
                try await Task.sleep(for: .milliseconds(200))
                #expect(try await active.command("PING \(i)").header.raw == "OK PONG \(i)")
                // Bytes, but never a line; once the daemon has closed it, sending fails.
                // (Only well inside its 3 s: on a loaded machine the loop above can run late.)
                if i < 5 && ContinuousClock.now - trickleConnected < .seconds(3) { try await trickle.sendRaw([UInt8(ascii: "x")]) }
            }
            #expect(try await silent.readLine() == "BYE idle for 6 s")
            try await silent.expectClosed()
            #expect(try await trickle.readLine() == "BYE idle for 6 s")
            try await trickle.expectClosed()
            #expect(ContinuousClock.now - started >= .milliseconds(5900))
            #expect(try await active.ok("STATUS").int("clients") == 1, "the active client stays; the others are gone")
        }
    }

    @Test("idle-timeout is off by default: a silent connection stays open")
    func noIdleTimeoutByDefault() async throws {
        try await withDaemon(Self.talk) { daemon, _ in
            let (silent, _) = try await daemon.join(label: "silent")
            try await Task.sleep(for: .milliseconds(1500))
            #expect(!(try await silent.hasData(within: .milliseconds(100))), "nothing was sent to a silent client")
            #expect(try await silent.ok("STATUS").int("clients") == 1)
        }
    }

    @Test("WHO answers with the count and a bounded page; WHO <offset> pages through everyone once")
    func whoPaging() async throws {
        try await withDaemon(Self.talk, arguments: ["--who-page-size", "4"]) { daemon, _ in
            var clients: [LineClient] = []
            for i in 0..<10 {
                let (c, _) = try await daemon.join(label: "c\(i)")
                try await c.ok("NAME n\(i)")
                clients.append(c)
            }
            let first = try await clients[0].command("WHO")
            #expect(first.header.raw == "OK WHO 10 next=4", "\(first.header)")
            #expect(first.lines.count == 4)
            var names: [String] = []
            var offset: Int? = 0
            while let o = offset {
                let page = try await clients[3].command("WHO \(o)")
                #expect(page.lines.count <= 4)
                names += page.lines.map { String($0.split(separator: " ")[0]) }
                offset = page.header.int("next")
            }
            #expect(names == (0..<10).map { "n\($0)" })
            #expect(try await clients[0].command("WHO 10").lines.isEmpty)
            #expect(try await clients[0].command("WHO -1").header.code == 400)
        }
    }

    @Test("PROTOCOL.md: the WHO paging capture replays against --who-page-size 2")
    func whoCaptureInProtocolMd() async throws {
        let markdown = try String(contentsOf: DocumentationTests.root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let blocks = try DocumentationTests.codeBlocks(in: markdown, after: "### `WHO [<offset>]`")
        let block = try #require(blocks.first { $0.first?.hasPrefix("$ printf") == true })
        try await withWorkspace { workspace in
            let daemon = try await workspace.startDaemon(arguments: ["--who-page-size", "2"])
            let (ann, _) = try await daemon.join(label: "ann")
            try await ann.ok("NAME ann")
            let (bob, _) = try await daemon.join(label: "bob")
            try await bob.ok("NAME bob")
            let script = String(block[0].dropFirst(2)).replacingOccurrences(of: "127.0.0.1 7777", with: "127.0.0.1 \(daemon.port)")
            let result = try await runProcess("/bin/sh", ["-c", script])
            #expect(result.status == 0, "\(result.output)")
            let got = result.output.split(separator: "\n").map(String.init)
            #expect(got.map(DocumentationTests.normalized) == block.dropFirst().map(DocumentationTests.normalized))
        }
    }
}
