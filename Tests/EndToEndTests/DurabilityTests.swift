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

    @Test("a removed state directory: rooms start over in a new epoch")
    func removedStateDirectory() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            try await client.ok("GOTO 4")
            first.send(signal: SIGTERM)
            _ = try await first.waitForExit(timeout: .seconds(10))
            try FileManager.default.removeItem(at: workspace.stateDir)

            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == 0 && again.page == 1)
            #expect(again["epoch"] != hello["epoch"], "a client holding v1 must not ignore the new v0..v1")
        }
    }

    @Test("the state directory removed while the daemon runs: noticed (within a second when idle), the whole state written again with the same epoch; every reply is OK or ERR 507, and kill -9 keeps every OK",
          arguments: ["batch", "always"])
    func stateDirectoryRemovedWhileRunning(durability: String) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let arguments = ["--wrap", "--durability", durability]
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"], arguments: arguments)
            let (client, hello) = try await daemon.join()
            var lastOK = try await client.ok("GOTO 4")
            try FileManager.default.removeItem(at: workspace.stateDir)

            // Changes go on: each is saved to the journal written again, or refused.
            var okAfterRewrite = 0
            for _ in 0..<400 where okAfterRewrite < 5 {
                let reply = try await client.command("NEXT").header
                if reply.kind == "OK" {
                    lastOK = reply
                    if daemon.stderr.contains("journal: rewritten with the whole state") { okAfterRewrite += 1 }
                } else {
                    #expect(reply.code == 507 && reply.raw.contains("the journal file was removed"), "\(reply)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(okAfterRewrite == 5, "the journal was not written again: \(daemon.stderr)")
            #expect(daemon.stderr.contains("the journal file was removed; changes get ERR 507 until the journal can be written again"), "\(daemon.stderr)")
            #expect(FileManager.default.fileExists(atPath: workspace.stateDir.appendingPathComponent("journal").path))

            daemon.kill9()
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            let second = try await workspace.startDaemon(documents: ["notes.txt"], arguments: arguments)
            let (_, again) = try await second.join()
            #expect(again.version == lastOK.version && again.page == lastOK.page, "acknowledged \(lastOK.raw), restarted with \(again.raw)")
            #expect(again["epoch"] == hello["epoch"], "nothing acknowledged was lost, so the epoch stays")
        }
    }

    @Test("the state directory removed, or the journal moved aside, while the daemon is idle (batch): within about a second the journal is written again where a start looks, before any change, and the dir is locked again; kill -9 then keeps the state and the epoch",
          arguments: ["remove the state dir", "move the journal"])
    func journalGoneWhileIdle(how: String) async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await daemon.join()
            let saved = try await client.ok("GOTO 5")
            try await Task.sleep(for: .milliseconds(1_500))  // past the once-a-second sync of that change
            let journal = workspace.stateDir.appendingPathComponent("journal").path
            if how == "move the journal" {
                #expect(rename(journal, journal + ".old") == 0)
            } else {
                try FileManager.default.removeItem(at: workspace.stateDir)
            }
            let back = try await eventually(attempts: 250) { FileManager.default.fileExists(atPath: journal) }
            #expect(back, "no journal 5 s after (\(how)): \(daemon.stderr)")
            let reason = how == "move the journal" ? "moved or replaced" : "removed"
            #expect(daemon.stderr.contains("journal: the journal file was \(reason); changes get ERR 507"), "\(daemon.stderr)")
            let rival = try await runProcess(
                Binaries.pagesyncd(), [workspace.url("notes.txt").path, "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path],
                timeout: .seconds(20))
            #expect(rival.status == 1 && rival.output.contains("is in use by another pagesyncd (pid \(daemon.pid))"), "\(rival.output.suffix(300))")
            daemon.kill9()
            _ = try await daemon.waitForExit(timeout: .seconds(5))
            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == saved.version && again.page == 5 && again["epoch"] == hello["epoch"], "\(again.raw)")
        }
    }

    @Test("the boot id decides: an unclean stop then a reboot gives a new epoch; a crash without reboot or a clean stop keeps it")
    func rebootAfterUncleanStop() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let bootFile = workspace.url("boot_id")
            let boot = ["PAGESYNCD_BOOT_ID_PATH": bootFile.path]
            func start(_ id: String) async throws -> (Daemon, LineClient, ServerLine) {
                try workspace.write("boot_id", id + "\n")
                let daemon = try await workspace.startDaemon(documents: ["notes.txt"], environment: boot)
                let (client, hello) = try await daemon.join()
                return (daemon, client, hello)
            }
            let (d1, c1, h1) = try await start("boot-a")
            try await c1.ok("NEXT")
            d1.kill9()
            _ = try await d1.waitForExit(timeout: .seconds(5))

            let (d2, c2, h2) = try await start("boot-a")
            #expect(h2["epoch"] == h1["epoch"] && h2.version == 1, "a crash on the same boot keeps the epoch")
            try await c2.ok("NEXT")
            d2.kill9()
            _ = try await d2.waitForExit(timeout: .seconds(5))

            let (d3, c3, h3) = try await start("boot-b")
            #expect(h3["epoch"] != h2["epoch"], "unclean stop, then a reboot: new epoch")
            #expect(h3.version == 2 && h3.page == 3, "the state read back is still served: \(h3)")
            #expect(d3.stderr.contains("rebooted"), "\(d3.stderr)")
            try await c3.ok("NEXT")
            d3.send(signal: SIGTERM)
            #expect(try await d3.waitForExit(timeout: .seconds(10)) == .exited(0))

            let (_, _, h4) = try await start("boot-c")
            #expect(h4["epoch"] == h3["epoch"] && h4.version == 3, "a clean stop keeps the epoch across a reboot")
        }
    }

    @Test("a new epoch is recorded before anything else: a start after an unclean stop and a reboot that fails half-way, or that serves only some rooms, does not make the next start forget it")
    func newEpochSurvivesAFailedStart() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            try workspace.write("extra.txt", Documents.formFeed(pages: 8))
            let boot = ["PAGESYNCD_BOOT_ID_PATH": workspace.url("boot_id").path]
            try workspace.write("boot_id", "boot-a\n")
            let first = try await workspace.startDaemon(documents: ["notes.txt", "extra.txt"], environment: boot)
            let (client, notes) = try await first.join()
            try await client.ok("NEXT")
            let extra = try await client.ok("JOIN extra")
            try await client.ok("NEXT")
            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))

            // A power loss in batch mode: the versions of the last second may be gone. After
            // the reboot the first start fails once the journal is read (a document is missing,
            // its file system not mounted yet).
            try workspace.write("boot_id", "boot-b\n")
            let failed = try await runProcess(
                Binaries.pagesyncd(),
                [workspace.url("notes.txt").path, workspace.url("missing.txt").path, "--listen", "127.0.0.1:0",
                 "--state-dir", workspace.stateDir.path], environment: boot)
            #expect(failed.status == 1 && failed.output.contains("rebooted"), "\(failed.output)")

            // The next start, with only one of the rooms, stops cleanly.
            let second = try await workspace.startDaemon(documents: ["notes.txt"], environment: boot)
            let (_, again) = try await second.join()
            #expect(again["epoch"] != notes["epoch"], "the new epoch was forgotten: \(again) after \(notes)")
            #expect(again.version == 1 && again.page == 2, "\(again)")
            second.send(signal: SIGTERM)
            #expect(try await second.waitForExit(timeout: .seconds(10)) == .exited(0))

            // The room that was not served gets its new epoch too.
            let third = try await workspace.startDaemon(documents: ["notes.txt", "extra.txt"], environment: boot)
            let (other, last) = try await third.join()
            #expect(last["epoch"] == again["epoch"] && last.version == 1, "\(last)")
            let moved = try await other.ok("JOIN extra")
            #expect(moved["epoch"] != extra["epoch"], "room extra kept epoch \(moved["epoch"] ?? "-") after an unclean stop and a reboot")
            #expect(moved.version == 1 && moved.page == 2, "\(moved)")
        }
    }

    @Test("a start whose journal cannot be rewritten leaves it untouched: serving, it refuses changes with ERR 507; failing (a missing document), it writes nothing; once the rewrite can be made, the rooms come back in a new epoch")
    func unrewritableJournalIsLeftAlone() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 8))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await first.join()
            for _ in 0..<5 { try await client.ok("NEXT") }
            first.send(signal: SIGTERM)
            #expect(try await first.waitForExit(timeout: .seconds(10)) == .exited(0))

            // Damage in the middle (a new epoch: the journal must be rewritten at start), and a
            // directory where the rewrite's temporary file goes, so the rewrite fails.
            let journal = workspace.stateDir.appendingPathComponent("journal")
            var bytes = try Array(Data(contentsOf: journal))
            bytes[bytes.count / 3] ^= 0x20
            try Data(bytes).write(to: journal)
            let blocker = workspace.stateDir.appendingPathComponent("journal.rewrite")
            try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: false)

            // A start that fails after loading (a missing document) writes nothing to it. It
            // used to record a clean stop at offset 0 and cut the file there: every room lost.
            let failed = try await runProcess(
                Binaries.pagesyncd(),
                [workspace.url("notes.txt").path, workspace.url("missing.txt").path, "--listen", "127.0.0.1:0",
                 "--state-dir", workspace.stateDir.path])
            #expect(failed.status == 1, "\(failed.output)")
            #expect(try Array(Data(contentsOf: journal)) == bytes, "the failed start changed the journal")

            // A start that serves refuses changes while it cannot rewrite, and writes nothing either.
            let refusing = try await workspace.startDaemon(documents: ["notes.txt"])
            let (reader, state) = try await refusing.join()
            #expect(state.version == 5 && state.page == 6, "\(state)")
            let refused = try await reader.command("NEXT")
            #expect(refused.header.raw.hasPrefix("ERR 507 state not saved: ") && refused.header.raw.contains("journal.rewrite"),
                    "\(refused.header.raw)")
            refusing.send(signal: SIGTERM)
            #expect(try await refusing.waitForExit(timeout: .seconds(10)) == .exited(0))
            #expect(try Array(Data(contentsOf: journal)) == bytes, "the refusing daemon changed the journal")

            // Once the rewrite can be made, the rooms come back where they were, in a new epoch.
            try FileManager.default.removeItem(at: blocker)
            let last = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await last.join()
            #expect(again.version == 5 && again.page == 6, "\(again)")
            #expect(again["epoch"] != nil && again["epoch"] != hello["epoch"], "\(again) after \(hello)")
        }
    }

    @Test("a journal that is not a regular file (a FIFO, a link to /dev/zero, a directory): the daemon refuses to start with one line naming it")
    func journalNotAFile() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 3))
            for kind in ["fifo", "zero", "directory"] {
                let state = workspace.url("state-\(kind)")
                try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
                let journal = state.appendingPathComponent("journal").path
                switch kind {
                case "fifo": #expect(mkfifo(journal, 0o600) == 0)
                case "zero": #expect(symlink("/dev/zero", journal) == 0)
                default: #expect(mkdir(journal, 0o700) == 0)
                }
                let result = try await runProcess(
                    Binaries.pagesyncd(), [workspace.url("notes.txt").path, "--listen", "127.0.0.1:0", "--state-dir", state.path],
                    timeout: .seconds(20))
                let lines = result.output.split(separator: "\n")
                #expect(result.status == 1 && lines.count == 1, "\(kind): status \(result.status): \(result.output.suffix(500))")
                let expected = kind == "directory" ? "journal: Is a directory" : "journal: not a regular file"
                #expect(lines.last?.contains(expected) == true, "\(kind): \(result.output.suffix(500))")
            }
        }
    }

    @Test("a second daemon on a state dir in use is refused with one line naming the first (their journals would mix); once the first is gone, even by kill -9, the dir is free")
    func stateDirectoryInUse() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 3))
            let first = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, _) = try await first.join()
            let saved = try await client.ok("NEXT")
            let result = try await runProcess(
                Binaries.pagesyncd(), [workspace.url("notes.txt").path, "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path],
                timeout: .seconds(20))
            let lines = result.output.split(separator: "\n")
            #expect(result.status == 1 && lines.count == 1, "status \(result.status): \(result.output.suffix(500))")
            #expect(lines.last?.contains("\(workspace.stateDir.path) is in use by another pagesyncd (pid \(first.pid)); each daemon needs its own --state-dir") == true,
                    "\(result.output.suffix(500))")
            #expect(try await client.ok("STATUS").version == saved.version, "the first daemon goes on, its state untouched")

            first.kill9()
            _ = try await first.waitForExit(timeout: .seconds(5))
            let second = try await workspace.startDaemon(documents: ["notes.txt"])
            let (_, again) = try await second.join()
            #expect(again.version == saved.version)
        }
    }

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

/// Appends `bytes` to the file at `url`.
func append(_ bytes: [UInt8], to url: URL) throws {
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
}
