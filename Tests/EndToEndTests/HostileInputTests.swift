import Testing

/// One malformed line, as bytes, with a name for the report.
struct BadLine: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    var testDescription: String { name }

    init(_ name: String, _ text: String) {
        self.name = name
        self.bytes = Array(text.utf8)
    }

    init(_ name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }

    /// Every kind of bad line the issue lists, each of which must get exactly one `ERR 400`.
    /// Several would move the room if the daemon parsed them leniently (the room is at version 0).
    static let all: [BadLine] = [
        BadLine("empty line", ""),
        BadLine("blank line", " \t  "),
        BadLine("NUL byte inside the verb", bytes: Array("NE".utf8) + [0] + Array("XT".utf8)),
        BadLine("NUL byte after the verb", bytes: Array("NEXT".utf8) + [0]),
        BadLine("invalid UTF-8", bytes: Array("PING ".utf8) + [0xFF, 0xFE]),
        BadLine("truncated UTF-8 sequence", bytes: Array("GOTO 2 ".utf8) + [0xE2, 0x82]),
        BadLine("page number overflowing Int", "GOTO 9223372036854775808"),
        BadLine("huge page number", "GOTO 99999999999999999999999999999999"),
        BadLine("version overflowing UInt64", "NEXT IF 18446744073709551616"),
        BadLine("GOTO 0", "GOTO 0"),
        BadLine("GOTO -1", "GOTO -1"),
        BadLine("GOTO +2", "GOTO +2"),
        BadLine("page number that is not a number", "GOTO two"),
        BadLine("GOTO without a page", "GOTO"),
        BadLine("unknown verb", "JUMP"),
        BadLine("extra argument to NEXT", "NEXT please"),
        BadLine("extra argument to GOTO", "GOTO 2 3"),
        BadLine("extra argument to STATUS", "STATUS now"),
        BadLine("stray IF on its own", "IF 0"),
        BadLine("IF without a version", "NEXT IF"),
        BadLine("IF twice", "NEXT IF 0 IF 0"),
        BadLine("IF after a non-navigation verb", "STATUS IF 0"),
        BadLine("IF with extra words", "NEXT IF 0 now"),
        BadLine("negative version", "NEXT IF -1"),
        BadLine("escape sequence", "NEXT\u{1B}[A"),
        BadLine("AUTH without a token", "AUTH"),
        BadLine("TEXT 0", "TEXT 0"),
    ]
}

/// What a hostile or broken client gets: one clear error, and nobody else notices.
@Suite("Bad input and limits", .timeLimit(.minutes(1)))
struct HostileInputTests {
    @Test("a bad line gets exactly one ERR 400; the client stays; nobody else notices", arguments: BadLine.all)
    func badLineGetsOneError(bad: BadLine) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (bystander, _) = try await daemon.join(label: "bystander")
            let (client, _) = try await daemon.join(label: "hostile")
            try await client.sendRaw(bad.bytes + [0x0A])
            let reply = try await client.readServerLine()
            #expect(reply.code == 400, "\(bad.name): got \(reply)")
            #expect(reply.words.count > 1, "the error has a text for people")
            #expect(try await client.sync() == [], "\(bad.name): more than one reply")
            let status = try await client.ok("STATUS")
            #expect(status.page == 1 && status.version == 0, "\(bad.name) changed the room: \(status)")
            #expect(try await bystander.sync() == [], "the bystander noticed \(bad.name)")
        }
    }

    @Test("the largest numbers that fit are not malformed: 404 for pages, 409 for versions")
    func largestNumbersAreValid() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, _) = try await daemon.join()
            #expect(try await client.command("GOTO 9223372036854775807").header.code == 404)
            #expect(try await client.command("TEXT 9223372036854775807").header.code == 404)
            #expect(try await client.command("NEXT IF 18446744073709551615").header.code == 409)
            #expect(try await client.command("GOTO 0002").header.page == 2, "leading zeros are digits")
            #expect(try await client.command("next if 1").header.page == 3, "IF is case-insensitive too")
        }
    }

    @Test("an HTTP line later in a session also closes it; so does a lowercase Host: header")
    func httpLaterInSession() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (first, _) = try await daemon.join()
            try await first.ok("PING")
            #expect(try await first.command("POST /submit HTTP/1.1").header.code == 400)
            try await first.expectClosed()
            let (second, _) = try await daemon.join()
            #expect(try await second.command("host: example.com").header.code == 400)
            try await second.expectClosed()
        }
    }

    @Test("all the bad lines in one write: one ERR 400 each, in order, then the next command works")
    func badLinesInOneWrite() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, _) = try await daemon.join()
            try await client.sendRaw(BadLine.all.flatMap { $0.bytes + [0x0A] } + Array("NEXT\n".utf8))
            for bad in BadLine.all {
                let reply = try await client.readServerLine()
                #expect(reply.code == 400, "\(bad.name): got \(reply)")
            }
            #expect(try await client.readServerLine().raw == "OK page=2 pages=3 version=1 line=1 mark=-")
        }
    }

    @Test("a line over the default 4096 bytes gets ERR 413 once; the connection stays usable",
          arguments: [4097, 100_000, 32_000_000])
    func overlongLineGets413(length: Int) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (bystander, _) = try await daemon.join(label: "bystander")
            let (client, _) = try await daemon.join()
            let baseline = try daemon.rssKiB()
            // "GOTO 2" followed by padding: if the daemon acted on a prefix, the room would move.
            let line = Array("GOTO 2 ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: length - 7)
            try await client.sendWhileReading(line + Array("\nNEXT\n".utf8))
            let reply = try await client.readServerLine()
            #expect(reply.code == 413, "got \(reply)")
            let next = try await client.readServerLine()
            #expect(next.raw == "OK page=2 pages=3 version=1 line=1 mark=-", "the line after the long one is read normally")
            #expect(try await client.sync().map { ServerLine($0).kind } == ["PAGE"])
            let growthKiB = try daemon.rssKiB() - baseline
            if Daemon.resourceBudgetsApply { #expect(growthKiB < 16 * 1024, "RSS grew by \(growthKiB) KiB for one \(length)-byte line") }
            #expect(try await bystander.sync().count == 1, "the bystander sees only the NEXT")
        }
    }

    @Test("a line exactly max-line long is accepted; one byte more is ERR 413")
    func maxLineIsConfigurable() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--max-line", "64"]) { daemon, _ in
            let (client, _) = try await daemon.join()
            let exact = "PING " + String(repeating: "y", count: 59)  // 64 bytes
            #expect(try await client.command(exact).header.raw == "OK PONG " + String(repeating: "y", count: 59))
            #expect(try await client.command(exact + "y").header.code == 413)
            #expect(try await client.command("PING after").header.raw == "OK PONG after")
        }
    }

    @Test("an HTTP request gets one ERR then the connection is closed", arguments: [
        "GET / HTTP/1.1\r\n",
        "GET / HTTP/1.1\r\nHost: localhost:7777\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n",
        "POST /api HTTP/1.0\r\nContent-Length: 0\r\n\r\n",
        "Host: example.com\r\n",
    ])
    func httpGetsOneErrorThenClose(request: String) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (bystander, _) = try await daemon.join(label: "bystander")
            let (client, _) = try await daemon.join(label: "http")
            try await client.sendRaw(Array(request.utf8))
            let reply = try await client.readServerLine()
            #expect(reply.code == 400, "got \(reply)")
            try await client.expectClosed()
            #expect(try await bystander.sync() == [])
            #expect(try await eventually { try await bystander.ok("STATUS").int("clients") == 1 }, "the HTTP client is gone")
        }
    }

    @Test("past max-clients a new connection gets ERR 503 and is closed; a freed slot can be reused")
    func serverFullGets503() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)], arguments: ["--max-clients", "2"]) { daemon, _ in
            let (first, _) = try await daemon.join(label: "first")
            let (second, _) = try await daemon.join(label: "second")
            let third = try await daemon.connect(label: "third")
            let full = try await third.readServerLine()
            #expect(full.code == 503, "got \(full)")
            try await third.expectClosed()
            #expect(try await first.ok("STATUS").int("clients") == 2)
            #expect(try await second.sync() == [])

            #expect(try await first.command("QUIT").header.raw == "OK BYE")
            try await first.expectClosed()
            // The daemon frees the slot when it closes the connection; allow it a moment to finish.
            let reusable = try await eventually {
                try await daemon.connect(label: "again").readServerLine().kind == "HELLO"
            }
            #expect(reusable, "a slot freed by QUIT was never reusable")
        }
    }

    @Test("TCP keepalive is on for client connections, so dead peers are noticed")
    func keepaliveIsOn() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, _) = try await daemon.join()
            _ = try await client.sync()
            // /proc/net/tcp: "tr" 02 on an idle established socket is the keepalive timer;
            // "tm->when" is when it fires, in jiffies. Find the daemon's end of this connection.
            let local = String(format: "0100007F:%04X", daemon.port)
            let remote = String(format: "0100007F:%04X", client.localPort)
            // While the last reply is unacknowledged the retransmit timer (01) shows instead; on a
            // busy machine that can last a moment, so look again for a few seconds.
            var row: [Substring] = []
            let keepalive = try await eventually(attempts: 250) {
                let table = try readProcFile("/proc/net/tcp")
                let rows: [[Substring]] = table.split(separator: "\n").map { $0.split(separator: " ") }
                let match = rows.first { row in row.count > 5 && row[1] == local && row[2] == remote }
                row = try #require(match, "the daemon's socket for this client (\(local) -> \(remote)) is not in /proc/net/tcp")
                return row[5].split(separator: ":").first == "02"
            }
            #expect(keepalive, "no keepalive timer on the daemon's socket: \(row.joined(separator: " "))")
        }
    }
}
