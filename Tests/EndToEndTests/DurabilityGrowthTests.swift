import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Disk use over many changes, compaction while changes go on, concurrent clients under
/// `always`, and the upgrade from `.state` files.
extension DurabilityTests {
    @Test("upgrade: <room>.state files of older versions are imported once")
    func upgradeFromStateFiles() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            try workspace.write("state/notes.state", "pagesync-state 1\npage=3\nversion=17\nby=ann\ndoc=0123456789ab\n")
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, hello) = try await first.join()
            // The saved doc id is not this file's: that is a change, so the version moves on by one.
            #expect(hello.page == 3 && hello.version == 18 && hello["by"] == "ann", "\(hello)")
            #expect(!FileManager.default.fileExists(atPath: workspace.stateDir.appendingPathComponent("notes.state").path))
            #expect(first.stderr.contains("imported 1 room(s)"), "\(first.stderr)")
            first.send(signal: SIGTERM)
            _ = try await first.waitForExit(timeout: .seconds(10))
            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == 18 && again["epoch"] == hello["epoch"])
        }
    }

    @Test("1,000,000 changes leave the state directory under 2 MiB, and every one is there after a restart")
    func compactionBoundsDiskUse() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"], arguments: ["--wrap"])
            let changes = Daemon.volume(1_000_000)
            let script = "yes next | head -n \(changes) | nc -N 127.0.0.1 \(daemon.port) > /dev/null"
            let result = try await runProcess("/bin/sh", ["-c", script], timeout: .seconds(150))
            #expect(result.status == 0, "\(result.output)")
            let (client, _) = try await daemon.join()
            let status = try await client.ok("STATUS")
            #expect(status.version == UInt64(changes), "\(status)")
            var used = 0
            for name in try FileManager.default.contentsOfDirectory(atPath: workspace.stateDir.path) {
                let attributes = try FileManager.default.attributesOfItem(atPath: workspace.stateDir.appendingPathComponent(name).path)
                used += (attributes[.size] as? Int) ?? 0
            }
            #expect(used < 2 << 20, "state dir holds \(used) bytes")
            daemon.kill9()
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            let again = try await workspace.startDaemon(documents: ["notes.txt"], arguments: ["--wrap"])
            let (_, hello) = try await again.join()
            #expect(hello.version == UInt64(changes) && hello.page == status.page)
        }
    }
}

extension DurabilityTests {
    @Test("20 rooms changed one at a time: the journal is compacted in the background while changes go on, and nothing is lost")
    func compactionWhileChanging() async throws {
        try await withWorkspace { workspace in
            let names = (0..<20).map { "room\($0).txt" }
            for name in names { try workspace.write(name, Documents.formFeed(pages: 4)) }
            let daemon = try await workspace.startDaemon(documents: names, arguments: ["--wrap"])
            let perRoom = 1_500  // 30,000 records of ~55 bytes: past 1 MiB
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, name) in names.enumerated() {
                    group.addTask {
                        let (client, _) = try await daemon.join(label: "c\(i)")
                        try await client.ok("JOIN \(name.dropLast(4))")
                        for _ in 0..<perRoom { try await client.ok("NEXT") }
                    }
                }
                try await group.waitForAll()
            }
            #expect(daemon.stderr.contains("journal: compacted"), "\(daemon.stderr)")
            let journal = workspace.stateDir.appendingPathComponent("journal")
            let size = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int ?? 0
            #expect(size < 2 << 20, "journal \(size) bytes")
            daemon.kill9()
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            let again = try await workspace.startDaemon(documents: names, arguments: ["--wrap"])
            let (client, _) = try await again.join()
            let rooms = try await client.command("ROOMS")
            #expect(rooms.lines.count == 20)
            for line in rooms.lines.map(ServerLine.init) {
                #expect(line.version == UInt64(perRoom), "\(line)")
            }
        }
    }
}

extension DurabilityTests {
    /// What the clients of ``alwaysWithConcurrentClients()`` were told, shared with the killer.
    private actor Acknowledged {
        var versions: [String: UInt64] = [:]
        var total = 0
        func record(_ room: String, _ version: UInt64) {
            versions[room] = version
            total += 1
        }
        func reached(rooms: Int, changes: Int) -> Bool { versions.count >= rooms && total >= changes }
    }

    @Test("durability always, 20 clients changing their own rooms at once (syncs shared, the gather wait): every client is answered, and after a kill -9 every acknowledged change is there")
    func alwaysWithConcurrentClients() async throws {
        try await withWorkspace { workspace in
            let names = (0..<20).map { "room\($0).txt" }
            for name in names { try workspace.write(name, Documents.formFeed(pages: 4)) }
            let daemon = try await workspace.startDaemon(documents: names, arguments: ["--wrap", "--durability", "always"])
            let acknowledged = Acknowledged()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, name) in names.enumerated() {
                    group.addTask {
                        let room = String(name.dropLast(4))
                        let (client, _) = try await daemon.join(label: "c\(i)")
                        try await client.ok("JOIN \(room)")
                        // First 25 changes each, then all stop at about the same time: the
                        // last syncs have nobody coming back and need the gather timer.
                        for expected in 1...25 {
                            let reply = try await client.command("NEXT")
                            #expect(reply.header.kind == "OK" && reply.header.version == UInt64(expected), "\(reply.header)")
                        }
                        await acknowledged.record(room, 25)
                        while await !acknowledged.reached(rooms: 20, changes: 20) {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        // Then on until the kill breaks the connection.
                        while let reply = try? await client.command("NEXT") {
                            #expect(reply.header.kind == "OK", "\(reply.header)")
                            await acknowledged.record(room, try #require(reply.header.version))
                        }
                    }
                }
                // A client left out of every sync would keep this waiting (the test's limit).
                while await !acknowledged.reached(rooms: 20, changes: 420) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                daemon.kill9()
                try await group.waitForAll()
            }
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            let again = try await workspace.startDaemon(documents: names, arguments: ["--wrap", "--durability", "always"])
            let (client, _) = try await again.join()
            let rooms = try await client.command("ROOMS")
            #expect(rooms.lines.count == 20)
            let versions = await acknowledged.versions
            for line in rooms.lines.map(ServerLine.init) {
                let version = try #require(versions[line.kind], "\(line)")
                #expect((line.version ?? 0) >= version, "\(line): acknowledged v\(version)")
            }
        }
    }
}
