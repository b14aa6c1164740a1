import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The journal as a user of a durable server would try it: kill -9, a full disk, damaged files,
/// reboots, disk use and the upgrade from `.state` files. Real daemons, real files.
@Suite("Durability", .timeLimit(.minutes(3)))
struct DurabilityTests {
    @Test("kill -9 ×30 during a stream of changes: no acknowledged change lost, no version regression, one epoch")
    func killNineDuringChanges() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 50))
            var acknowledged: ServerLine?  // the newest state any client was told of
            var epoch: String?
            var highest: UInt64 = 0
            for round in 0..<30 {
                let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: ["--wrap"])
                let (client, hello) = try await daemon.join(label: "round-\(round)")
                let version = try #require(hello.version)
                if let acked = acknowledged, let ackedVersion = acked.version {
                    #expect(version >= ackedVersion, "round \(round): acknowledged v\(ackedVersion), restarted at v\(version)")
                    if version == ackedVersion { #expect(hello.page == acked.page, "round \(round): \(hello) after \(acked)") }
                }
                #expect(version >= highest, "round \(round): versions never go back")
                if let epoch { #expect(hello["epoch"] == epoch, "round \(round): a crash on the same boot keeps the epoch") }
                epoch = hello["epoch"]
                acknowledged = hello
                highest = version
                let killer = Task {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 5...60)))
                    daemon.kill9()
                }
                while true {
                    guard let reply = try? await client.command("NEXT") else { break }
                    #expect(reply.header.kind == "OK", "\(reply.header)")
                    if reply.header.kind == "OK" {
                        acknowledged = reply.header
                        highest = max(highest, reply.header.version ?? 0)
                    }
                }
                try await killer.value
                #expect(try await daemon.waitForExit(timeout: .seconds(5)) == .signaled(SIGKILL))
            }
            #expect(highest > 30, "changes were made between the kills: \(highest)")
        }
    }

    @Test("stray bytes after the last record are dropped with a one-line error; the daemon starts with the version before them, in a new epoch (nothing says they were never acknowledged)")
    func strayBytesAfterTheLastRecord() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            for _ in 0..<3 { try await client.ok("NEXT") }
            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))
            // 37 stray bytes once made the daemon start at version 1,795,417,845,944.
            try append(Array(repeating: 0x41, count: 37), to: workspace.stateDir.appendingPathComponent("journal"))

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == 3 && again.page == 4, "\(again)")
            #expect(again["epoch"] != hello["epoch"], "a new epoch: \(again)")
            #expect(second.stderr.contains("dropping a damaged last record") && second.stderr.contains("clients will see a new epoch"), "\(second.stderr)")
        }
    }

    @Test("a bit flipped in the last record of a crashed daemon's journal: that record may have been acknowledged, so the rooms start a new epoch at the version before it, and say so")
    func damagedLastRecord() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            for _ in 0..<4 { try await client.ok("NEXT") }  // v4, acknowledged (synced within a second)
            try await Task.sleep(for: .milliseconds(1_200))
            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))
            let journal = workspace.stateDir.appendingPathComponent("journal")
            var bytes = try Array(Data(contentsOf: journal))
            let end = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
            bytes[end - 3] ^= 0x04  // inside v4's record, which is followed by the zeros written ahead
            try Data(bytes).write(to: journal)

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == 3 && again["epoch"] != hello["epoch"], "v4 is gone, so its epoch is too: \(again)")
            #expect(second.stderr.contains("dropping a damaged last record") && second.stderr.contains("it may have been acknowledged"), "\(second.stderr)")
        }
    }

    @Test("a journal emptied while the daemon was stopped: the rooms start anew in a new epoch, and the daemon says why in one line")
    func emptiedJournal() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            try await client.ok("GOTO 6")
            first.send(signal: SIGTERM)
            _ = try await first.waitForExit(timeout: .seconds(10))
            #expect(truncate(workspace.stateDir.appendingPathComponent("journal").path, 0) == 0)

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == 0 && again["epoch"] != hello["epoch"], "\(again)")
            #expect(second.stderr.contains("exists but holds no record; whatever it held is lost; clients will see a new epoch"), "\(second.stderr)")
        }
    }

    @Test("a change made right after the state directory was removed is refused (ERR 507), not acknowledged into the removed file", arguments: ["batch", "always"])
    func changeRightAfterTheStateDirWasRemoved(durability: String) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let arguments = ["--durability", durability]
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"], arguments: arguments)
            let (client, hello) = try await daemon.join()
            let saved = try await client.ok("GOTO 3")
            try FileManager.default.removeItem(at: workspace.stateDir)
            // Well within the second before the idle check would notice.
            let reply = try await client.command("NEXT").header
            #expect(reply.code == 507 && reply.raw.contains("the journal file was removed"), "\(reply)")
            daemon.kill9()
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            // Whatever the start finds (the dir written again, or nothing), nothing acknowledged
            // is served differently under the same epoch.
            let second = try await workspace.startDaemon(documents: ["notes.txt"], arguments: arguments)
            let (_, again) = try await second.join()
            if again["epoch"] == hello["epoch"] {
                #expect(again.version == saved.version && again.page == 3, "\(again)")
            }
        }
    }

    @Test("directories are synced: a new state dir's parent and the dir itself once the journal is made in it; a failed directory sync is a failed sync (changes refused until the journal is written again)")
    func directorySyncs() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let state = workspace.url("new/state").path
            let log = workspace.url("faults.log").path
            // Only the trace: nothing fails.
            var environment = try FaultShim.environment(spec: "", path: workspace.root.path, killAfter: nil, log: log, seed: 1)
            environment["PAGESYNC_FAULT_TRACE"] = "dirsync"
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"], arguments: ["--state-dir", state], environment: environment)
            let trace = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let root = workspace.root.standardizedFileURL.path
            for synced in ["\(root)", "\(root)/new", "\(root)/new/state"] {
                #expect(trace.contains("call dirsync \(synced)\n"), "\(synced) synced: \(trace)")
            }
            daemon.send(signal: SIGTERM)
            _ = try await daemon.waitForExit(timeout: .seconds(10))

            // A state dir that cannot be made durable stops the start, in one line.
            let failing = try FaultShim.environment(spec: "dirsync:1:EIO", path: workspace.root.path, killAfter: nil, log: log, seed: 1)
            let refused = try await runProcess(
                Binaries.pagesyncd(), [workspace.url("notes.txt").path, "--listen", "127.0.0.1:0", "--state-dir", workspace.url("made/state").path],
                environment: failing, timeout: .seconds(20))
            #expect(refused.status == 1 && refused.output.contains("sync: Input/output error"), "\(refused.output)")
            // The new journal's directory sync fails (the dir exists): the daemon serves, and changes
            // are refused until the journal is written again.
            try FileManager.default.createDirectory(at: workspace.url("other"), withIntermediateDirectories: true)
            let again = try await workspace.startDaemon(documents: ["notes.txt"], arguments: ["--state-dir", workspace.url("other").path], environment: failing)
            let (client, _) = try await again.join()
            let recovered = try await eventually(attempts: 100) { try await client.command("NEXT").header.kind == "OK" }
            #expect(recovered, "\(again.stderr)")
            #expect(again.stderr.contains("sync: Input/output error; changes get ERR 507 until the journal can be written again"), "\(again.stderr)")
            #expect(again.stderr.contains("journal: rewritten with the whole state"), "\(again.stderr)")
        }
    }

    @Test("a corrupt record in the middle of the journal: later records still count, and the rooms start a new epoch")
    func corruptMiddle() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            for _ in 0..<5 { try await client.ok("NEXT") }
            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))
            let journal = workspace.stateDir.appendingPathComponent("journal")
            var bytes = try Array(Data(contentsOf: journal))
            // The records, not the zeros the journal keeps written ahead of them.
            let records = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
            #expect(records < bytes.count, "a killed daemon's journal ends in zeros written ahead")
            bytes[records / 3] ^= 0x20
            try Data(bytes).write(to: journal)

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again["epoch"] != nil && again["epoch"] != hello["epoch"], "new epoch: \(again)")
            #expect(again.version == 5 && again.page == 6, "the last record survived: \(again)")
            #expect(second.stderr.contains("new epoch"), "\(second.stderr)")
            // The damage is repaired at start: a third start finds nothing wrong and keeps the epoch.
            second.send(signal: SIGTERM)
            _ = try await second.waitForExit(timeout: .seconds(10))
            let third = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, last) = try await third.join()
            #expect(last["epoch"] == again["epoch"] && last.version == 5)
        }
    }
}

/// Appends `bytes` to the file at `url`.
func append(_ bytes: [UInt8], to url: URL) throws {
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
}
