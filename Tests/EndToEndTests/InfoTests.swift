import Testing

/// `INFO` on the line protocol: Redis-style sections of `field:value` lines that count what the
/// daemon did.
@Suite("INFO", .timeLimit(.minutes(2)))
struct InfoTests {
    /// The `field:value` lines of a reply, as a dictionary (headings and empty lines left out).
    static func fields(_ reply: Reply) -> [String: String] {
        var out: [String: String] = [:]
        for line in reply.lines where !line.isEmpty && !line.hasPrefix("#") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { out[String(parts[0])] = String(parts[1]) }
        }
        return out
    }

    @Test func countsWhatClientsDid() async throws {
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: ["--wrap"]) { daemon, _ in
            let (follower, _) = try await daemon.join(label: "follower")
            let (client, _) = try await daemon.join(label: "driver")
            for _ in 0..<5 { _ = try await client.ok("NEXT") }
            _ = try await client.command("JUMP")
            _ = try await client.command("GOTO 9")
            let stats = try await client.command("INFO stats")
            #expect(stats.header.raw == "OK INFO")
            #expect(stats.lines.first == "# Stats")
            let f = Self.fields(stats)
            #expect(f["command_next"] == "5")
            #expect(f["command_goto"] == "1")
            #expect(f["command_info"] == "1", "INFO counts itself")
            #expect(f["error_400"] == "1")
            #expect(f["error_404"] == "1")
            #expect(f["errors"] == "2")
            #expect(f["page_changes"] == "5")
            #expect(f["deliveries"] == "10", "5 changes to 2 members")
            #expect(Int(f["bytes_in"] ?? "") ?? 0 > 30)

            let all = try await client.command("INFO")
            #expect(all.lines.filter { $0.hasPrefix("# ") } == ["# Server", "# Clients", "# Rooms", "# Engine", "# Stats"])
            let a = Self.fields(all)
            #expect(a["connected_clients"] == "2")
            #expect(a["connected_clients_tcp"] == "2")
            #expect(a["rooms"] == "1")
            #expect(a["room_deck"]?.hasPrefix("page=3,pages=3,version=5,") == true, "\(a["room_deck"] ?? "-")")
            #expect(a["room_deck"]?.hasSuffix(",members=2,changes=5") == true)
            #expect(a["engine"] == "journal")
            #expect(a["accepting_changes"] == "yes")
            #expect(a["process_id"] == String(daemon.pid))
            #expect(a["listen"] == "127.0.0.1:\(daemon.port)")
            #expect(a["metrics_listen"] == "-")

            let wrong = try await client.command("info memory")
            #expect(wrong.header.raw == "ERR 400 no INFO section \"memory\"; sections: server, clients, rooms, engine, stats, all")
            follower.close()
        }
    }

    @Test func perRoomLinesStopAtMetricsRooms() async throws {
        try await withWorkspace { workspace in
            let names = (0..<5).map { "r\($0).txt" }
            for name in names { try workspace.write(name, Documents.formFeed(pages: 2)) }
            let daemon = try await workspace.startDaemon(documents: names, arguments: ["--metrics-rooms", "2"])
            let (client, _) = try await daemon.join()
            let f = Self.fields(try await client.command("INFO rooms"))
            #expect(f["rooms"] == "5")
            #expect(f["rooms_listed"] == "2")
            #expect(f.keys.filter { $0.hasPrefix("room_") }.sorted() == ["room_r0", "room_r1"])
        }
    }
}
