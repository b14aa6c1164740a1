import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--config FILE` with a YAML file in the format of Config/pagesyncd.yaml.
@Suite("Configuration file", .timeLimit(.minutes(1)))
struct ConfigTests {
    static let deck = "# Title\n---\n## Second slide\n---\n## Last slide\n"

    /// A config with two rooms; `extra` is appended inside the `deck` room block.
    static func config(stateDir: URL, maxClients: Int = 10, maxLine: Int = 128, idleTimeout: Int = 0, wrapNotes: Bool = false,
                       deckToken: String = "token: s3cret", extraRooms: String = "") -> String {
        """
        # written by the end-to-end tests
        listen: "127.0.0.1:0"
        state-dir: "\(stateDir.path)"
        max-clients: \(maxClients)
        max-line: \(maxLine)
        idle-timeout: \(idleTimeout)
        durability: batch
        rooms: [notes, deck\(extraRooms.isEmpty ? "" : ", extra")]
        room:
          notes:
            file: notes.txt
            wrap: \(wrapNotes)
          deck:
            file: slides/deck.md
            split: "separator:---"
            wrap: true
            \(deckToken)
        \(extraRooms)
        """
    }

    static func prepare(_ workspace: Workspace) throws {
        try workspace.write("notes.txt", Documents.formFeed(pages: 4))
        try FileManager.default.createDirectory(at: workspace.url("slides"), withIntermediateDirectories: true)
        try workspace.write("slides/deck.md", deck)
    }

    @Test("rooms, split, wrap, token, max-line, listen and state-dir come from the file")
    func configDefinesRooms() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            let stateDir = workspace.url("config-state")
            let config = try workspace.write("pagesyncd.yaml", Self.config(stateDir: stateDir))
            let daemon = try await workspace.startDaemon(arguments: ["--config", config.path], addDefaults: false)
            let (client, hello) = try await daemon.join()
            #expect(hello["room"] == "notes" && hello.pages == 4 && hello["wrap"] == "no" && hello["control"] == "yes")
            let rooms = try await client.command("ROOMS")
            #expect(rooms.lines.map { ServerLine($0).kind } == ["notes", "deck"], "\(rooms)")
            let deck = ServerLine(rooms.lines.last ?? "")
            #expect(deck.pages == 3 && deck["control"] == "token" && deck["wrap"] == "yes", "\(deck)")

            try await client.ok("NEXT")
            #expect(FileManager.default.fileExists(atPath: stateDir.appendingPathComponent("journal").path),
                    "state-dir from the config file is used")
            #expect(try await client.command("PING " + String(repeating: "z", count: 130)).header.code == 413, "max-line: 128")

            let joined = try await client.ok("JOIN deck")
            #expect(joined["control"] == "no" && joined["wrap"] == "yes" && joined.pages == 3)
            #expect(try await client.command("PREV").header.code == 403)
            #expect(try await client.command("AUTH s3cret").header.raw == "OK AUTH control=yes")
            let wrapped = try await client.ok("PREV")
            #expect(wrapped.page == 3, "deck wraps: \(wrapped)")
            #expect(try await client.command("TEXT").lines == ["## Last slide"])
        }
    }

    @Test("token-file: the token is read from the file's first line")
    func tokenFile() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            try workspace.write("deck.token", "from-the-file\nsecond line is ignored\n")
            let config = try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, deckToken: "token-file: deck.token"))
            let daemon = try await workspace.startDaemon(arguments: ["--config", config.path], addDefaults: false)
            let (client, _) = try await daemon.join()
            try await client.ok("JOIN deck")
            #expect(try await client.command("AUTH second").header.code == 403)
            #expect(try await client.command("AUTH from-the-file").header.raw == "OK AUTH control=yes")
            #expect(try await client.ok("NEXT").page == 2)
        }
    }

    @Test("--token-file credential:<name> reads $CREDENTIALS_DIRECTORY/<name>, as systemd's LoadCredential= provides it")
    func tokenFileFlagReadsASystemdCredential() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            try FileManager.default.createDirectory(at: workspace.url("credentials"), withIntermediateDirectories: true)
            try workspace.write("credentials/notes-token", "from-credentials\n")
            let daemon = try await workspace.startDaemon(
                documents: ["notes.txt"], arguments: ["--token-file", "credential:notes-token"],
                environment: ["CREDENTIALS_DIRECTORY": workspace.url("credentials").path])
            let (client, _) = try await daemon.join()
            #expect(try await client.command("NEXT").header.code == 403)
            #expect(try await client.command("AUTH from-credentials").header.raw == "OK AUTH control=yes")
            #expect(try await client.ok("NEXT").page == 2)
        }
    }

    @Test("command-line flags override the file")
    func flagsOverrideTheFile() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            let config = try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, maxClients: 1))
            let daemon = try await workspace.startDaemon(arguments: ["--config", config.path, "--max-clients", "2", "--max-line", "4096"], addDefaults: false)
            let (first, _) = try await daemon.join()
            let (_, second) = try await daemon.join()
            #expect(second.kind == "HELLO")
            #expect(try await first.command("PING " + String(repeating: "z", count: 1000)).header.kind == "OK")
        }
    }

    @Test("SIGHUP reloads the file: a new room appears, a room's wrap changes, clients stay")
    func sighupReloadsConfig() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            try workspace.write("extra.txt", Documents.formFeed(pages: 2))
            let url = try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir))
            let daemon = try await workspace.startDaemon(arguments: ["--config", url.path], addDefaults: false)
            let (client, _) = try await daemon.join()
            try await client.ok("GOTO 2")
            _ = try await client.sync()

            let extra = """
              extra:
                file: extra.txt
            """
            try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, wrapNotes: true, extraRooms: extra))
            daemon.send(signal: SIGHUP)
            // Reloading is asynchronous; poll STATUS until it shows the new policy.
            var status = try await client.ok("STATUS")
            for _ in 0..<100 where status["wrap"] != "yes" {
                try await Task.sleep(for: .milliseconds(20))
                status = try await client.ok("STATUS")
            }
            #expect(status["wrap"] == "yes" && status.page == 2 && status.version == 1, "\(status)")
            let rooms = try await client.command("ROOMS")
            #expect(rooms.lines.map { ServerLine($0).kind } == ["notes", "deck", "extra"], "\(rooms)")
            #expect(try await client.ok("JOIN extra").pages == 2)
        }
    }

    @Test("SIGHUP lowering max-line: a connection made before keeps its limit, and its ERR 413 names that limit")
    func reloadedMaxLineKeepsTheOldConnectionsLimit() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            let url = try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, maxLine: 4096))
            let daemon = try await workspace.startDaemon(arguments: ["--config", url.path], addDefaults: false)
            let (old, _) = try await daemon.join(label: "before the reload")

            try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, maxLine: 100))
            daemon.send(signal: SIGHUP)
            // A new connection gets the new limit once the reload is applied.
            var fresh = try await daemon.join(label: "after the reload").0
            var reply = try await fresh.command("PING " + String(repeating: "n", count: 200))
            for _ in 0..<250 where reply.header.code != 413 {
                try await Task.sleep(for: .milliseconds(20))
                fresh.close()
                fresh = try await daemon.join(label: "after the reload").0
                reply = try await fresh.command("PING " + String(repeating: "n", count: 200))
            }
            #expect(reply.header.raw == "ERR 413 line longer than 100 bytes", "\(reply)")

            // The old connection still takes lines up to 4096 bytes, and is told 4096 past it.
            #expect(try await old.command("PING " + String(repeating: "o", count: 200)).header.kind == "OK")
            let tooLong = try await old.command("PING " + String(repeating: "o", count: 5000))
            #expect(tooLong.header.raw == "ERR 413 line longer than 4096 bytes", "\(tooLong)")
            #expect(try await old.ok("PING still here").kind == "OK")
        }
    }
    @Test("SIGHUP turning idle-timeout on: connections open before it, silent or slowloris, get BYE too; an active one stays")
    func reloadedIdleTimeoutCoversOpenConnections() async throws {
        try await withWorkspace { workspace in
            try Self.prepare(workspace)
            let url = try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir))
            let daemon = try await workspace.startDaemon(arguments: ["--config", url.path], addDefaults: false)
            // The connections an operator turns the timeout on against: open, and never a whole line.
            let (silent, _) = try await daemon.join(label: "silent")
            let (slowloris, _) = try await daemon.join(label: "slowloris")
            try await slowloris.sendRaw(Array("NEX".utf8))
            let (active, _) = try await daemon.join(label: "active")

            try workspace.write("pagesyncd.yaml", Self.config(stateDir: workspace.stateDir, idleTimeout: 6))
            daemon.send(signal: SIGHUP)
            try await daemon.waitForReload()
            // The active client speaks every 200 ms, far inside the 6 s even when the parallel suite
            // keeps this process off the CPU for seconds, until the others are told.
            let speaking = Task { () async throws -> Void in
                var i = 0
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(200))
                    #expect(try await active.command("PING \(i)").header.raw == "OK PONG \(i)")
                    i += 1
                }
            }
            // A daemon that only watches connections made after the reload never says it.
            #expect(try await silent.readLine() == "BYE idle for 6 s")
            try await silent.expectClosed()
            #expect(try await slowloris.readLine() == "BYE idle for 6 s")
            try await slowloris.expectClosed()
            speaking.cancel()
            try await speaking.value
            #expect(try await active.ok("STATUS").int("clients") == 1, "the active client stays; the others are gone")
        }
    }
}
