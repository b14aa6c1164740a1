import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The state directory and the journal file as an operator or a system might disturb them:
/// removed or replaced while the daemon runs, reboots and unclean stops, a second daemon.
extension DurabilityTests {
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
}
