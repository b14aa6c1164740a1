import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs for the state directory, to fill up. Mounting needs root (CI runs as root).
enum SmallDisk {
    /// Whether this process may mount a tmpfs (tried once, on a scratch directory).
    static let canMount: Bool = {
        guard geteuid() == 0 else { return false }
        let dir = "/tmp/pagesync-mount-probe-\(getpid())"
        mkdir(dir, 0o700)
        defer { rmdir(dir) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]) == 0 else { return false }
        _ = run("/bin/umount", [dir])
        return true
    }()

    @discardableResult
    static func run(_ path: String, _ arguments: [String]) -> Int32 {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, path, nil, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status
    }

    /// Runs `body` with a 256 KiB tmpfs mounted at `<workspace>/small`, unmounted after.
    static func withMount<T>(in workspace: Workspace, _ body: (URL) async throws -> T) async throws -> T {
        let mount = workspace.url("small")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        try #require(run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mount.path]) == 0)
        defer { run("/bin/umount", ["-l", mount.path]) }
        return try await body(mount)
    }

    /// Writes to `path` until the file system is full.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x46, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        let byte: [UInt8] = [0]
        while byte.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
    }
}

@Suite("Full disk", .timeLimit(.minutes(2)))
struct FullDiskTests {
    @Test("the state dir on a full tmpfs: every reply is OK or ERR 507, followers never pass the last OK, kill -9 keeps every OK, and freed space works without a restart",
          .enabled(if: SmallDisk.canMount, "skipped: mounting a 256 KiB tmpfs needs root"),
          arguments: ["batch", "always"])
    func fullDisk(durability: String) async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 9))
            try await SmallDisk.withMount(in: workspace) { mount in
                let state = mount.appendingPathComponent("state").path
                let arguments = ["--wrap", "--durability", durability, "--state-dir", state]

                let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (turner, hello) = try await daemon.join(label: "turner")
                let (follower, _) = try await daemon.join(label: "follower")
                var lastOK = try #require(hello.version)
                var lastOKPage = hello.page
                var firstRefusal = 0
                SmallDisk.fill(mount.appendingPathComponent("filler").path)

                // Changes use up the zeros written ahead of the records (sized to the free space at
                // start), then are refused; 100 more after the first refusal.
                var refused = 0
                var sent = 0
                while sent < 20_000 && (refused == 0 || sent < 100 + firstRefusal) {
                    sent += 1
                    let reply = try await turner.command("NEXT")
                    if reply.header.kind != "OK" && refused == 0 { firstRefusal = sent }
                    if reply.header.kind == "OK" {
                        lastOK = try #require(reply.header.version)
                        lastOKPage = reply.header.page
                    } else {
                        #expect(reply.header.code == 507, "\(reply.header)")
                        #expect(reply.header.raw.contains("state not saved: No space left on device"), "\(reply.header)")
                        refused += 1
                    }
                }
                #expect(refused > 0, "the disk filled up")
                // A follower that did not read meanwhile is conflated: its latest state may come
                // after the reply to its own PING, so it reads past a second one.
                let seen = try await (follower.sync() + follower.sync("again")).map(ServerLine.init).filter { $0.kind == "PAGE" }
                #expect(seen.allSatisfy { ($0.version ?? .max) <= lastOK }, "a follower saw a change that was not saved: \(seen.last.map(\.raw) ?? "")")
                #expect(seen.last?.version == lastOK, "followers have the last saved state")
                let status = try await turner.ok("STATUS")
                #expect(status.version == lastOK && status.page == lastOKPage, "reads work and report the saved state: \(status)")
                #expect(try await turner.command("TEXT").header.kind == "OK")
                let failures = daemon.stderr.components(separatedBy: "No space left on device").count - 1
                #expect(failures >= 1 && failures <= 3, "the cause is logged once, not per change (\(failures) lines)")

                // kill -9 while still full, then a restart (still full): every OK is there.
                daemon.kill9()
                _ = try await daemon.waitForExit(timeout: .seconds(5))
                let second = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (client, again) = try await second.join()
                #expect(again.version == lastOK && again.page == lastOKPage, "acknowledged v\(lastOK), restarted with \(again)")

                // Space returns: changes work again without a restart (the first may still be refused
                // while the journal is being rewritten in the background).
                unlink(mount.appendingPathComponent("filler").path)
                var recovered: ServerLine?
                for _ in 0..<50 {
                    let reply = try await client.command("NEXT")
                    if reply.header.kind == "OK" { recovered = reply.header; break }
                    #expect(reply.header.code == 507, "\(reply.header)")
                    try await Task.sleep(for: .milliseconds(100))
                }
                let ok = try #require(recovered, "no change succeeded within 5 s of freeing space")
                #expect(ok.version == lastOK + 1, "versions go on from the last saved one: \(ok)")
                second.kill9()
                _ = try await second.waitForExit(timeout: .seconds(5))
                let third = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (_, last) = try await third.join()
                #expect(last.version == ok.version && last["epoch"] == hello["epoch"], "\(last)")
            }
        }
    }

    @Test("a small disk the journal fills by itself: compaction keeps the journal within it (records never wedge on ENOSPC), and kill -9 keeps the last OK",
          .enabled(if: SmallDisk.canMount, "skipped: mounting a 256 KiB tmpfs needs root"),
          arguments: ["batch", "always"])
    func journalFillsASmallDisk(durability: String) async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 9))
            try await SmallDisk.withMount(in: workspace) { mount in
                let state = mount.appendingPathComponent("state").path
                let arguments = ["--wrap", "--durability", durability, "--state-dir", state]
                let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (turner, hello) = try await daemon.join(label: "turner")
                // About 70 bytes a record: 6,000 changes are 400 KiB of records on a 256 KiB disk.
                var last: ServerLine?
                var refused = 0
                for _ in 0..<6000 {
                    let reply = try await turner.command("NEXT").header
                    if reply.kind == "OK" { last = reply } else {
                        #expect(reply.code == 507, "\(reply)")
                        refused += 1
                    }
                }
                let ok = try #require(last)
                #expect(refused == 0, "no change refused: the journal was compacted before the disk filled (\(refused) refused)")
                #expect(ok.version == (hello.version ?? 0) + 6000 - UInt64(refused))
                #expect(daemon.stderr.contains("compacted"), "\(daemon.stderr)")
                daemon.kill9()
                _ = try await daemon.waitForExit(timeout: .seconds(5))
                let second = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (_, again) = try await second.join()
                #expect(again.version == ok.version && again.page == ok.page && again["epoch"] == hello["epoch"], "\(again) after \(ok)")
            }
        }
    }

    @Test("a disk filled by another file: a write that fails for want of space starts a compaction, and once the journal's own space is reclaimed changes are accepted again without a restart",
          .enabled(if: SmallDisk.canMount, "skipped: mounting a 256 KiB tmpfs needs root"))
    func fullDiskCompactsToMakeRoom() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 9))
            try await SmallDisk.withMount(in: workspace) { mount in
                let state = mount.appendingPathComponent("state").path
                let arguments = ["--wrap", "--state-dir", state]
                let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (turner, _) = try await daemon.join(label: "turner")
                // The journal grows to 60 KiB of records, then a filler takes every byte left.
                for _ in 0..<900 { try await turner.ok("NEXT") }
                SmallDisk.fill(mount.appendingPathComponent("filler").path)
                // The zeros written ahead are used up, then changes are refused.
                var refused = false
                for _ in 0..<3000 where !refused {
                    let reply = try await turner.command("NEXT").header
                    refused = reply.code == 507
                    if !refused { try #require(reply.kind == "OK", "\(reply)") }
                }
                try #require(refused, "the disk never filled")
                // 8 KiB come back: room for a snapshot (under 1 KiB) but for only about a hundred
                // records. A compaction makes the room the 1,000 changes below need, reclaiming
                // the journal's old records, without a restart.
                let filler = open(mount.appendingPathComponent("filler").path, O_WRONLY | O_CLOEXEC)
                var size = stat()
                fstat(filler, &size)
                ftruncate(filler, size.st_size - 8192)
                close(filler)
                var accepted = 0
                let deadline = ContinuousClock.now + .seconds(20)
                while accepted < 1000 && ContinuousClock.now < deadline {
                    let reply = try await turner.command("NEXT").header
                    if reply.kind == "OK" { accepted += 1 } else {
                        #expect(reply.code == 507, "\(reply)")
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                #expect(accepted == 1000, "\(accepted) of 1,000 changes accepted after 8 KiB came back: \(daemon.stderr)")
                #expect(daemon.stderr.contains("compacted"), "\(daemon.stderr)")
            }
        }
    }

    @Test("a re-index whose record cannot be saved on a full disk is undone, then applied again once it can be: doc= comes to match the text TEXT serves",
          .enabled(if: SmallDisk.canMount, "skipped: mounting a 256 KiB tmpfs needs root"))
    func reindexOnFullDisk() async throws {
        try await withWorkspace { workspace in
            try workspace.write("talk.txt", Documents.formFeed(pages: 9))
            try await SmallDisk.withMount(in: workspace) { mount in
                let arguments = ["--wrap", "--state-dir", mount.appendingPathComponent("state").path]
                let daemon = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (client, hello) = try await daemon.join(label: "client")
                let (follower, _) = try await daemon.join(label: "follower")
                let oldDoc = try #require(hello["doc"])
                SmallDisk.fill(mount.appendingPathComponent("filler").path)
                // Changes use up the zeros written ahead of the records, until one cannot be saved.
                var full = false
                for _ in 0..<20_000 where !full {
                    let reply = try await client.command("NEXT").header
                    full = reply.code == 507
                    if !full { try #require(reply.kind == "OK", "\(reply)") }
                }
                try #require(full, "no change was refused on the full disk")

                // The presenter saves an edit that drops 4 pages; its record cannot be written.
                try workspace.write("talk.txt", Documents.formFeed(pages: 5))
                let reindexed = try await eventually(attempts: 500) { daemon.stderr.contains("re-indexed, 5 page(s)") }
                try #require(reindexed, "the edit was not re-indexed: \(daemon.stderr)")
                let text = try await client.command("TEXT 1").header
                let newDoc = try #require(text["doc"])
                #expect(newDoc != oldDoc && text["pages"] == "5", "TEXT serves the edited document: \(text)")
                #expect(try await client.ok("STATUS")["doc"] == oldDoc, "nothing unsaved is reported while the disk is full")

                // Space returns: within a few seconds the room names the document it serves, and
                // followers hear of it.
                unlink(mount.appendingPathComponent("filler").path)
                var status: ServerLine?
                let matched = try await eventually(attempts: 250) {
                    status = try await client.ok("STATUS")
                    return status?["doc"] == newDoc
                }
                #expect(matched, "the room's doc= stays \(status?["doc"] ?? "?") while TEXT serves \(newDoc)")
                #expect(status?["pages"] == "5")
                // (Conflated while it did not read: its latest state may follow its PING's reply.)
                let seen = try await (follower.sync() + follower.sync("again")).map(ServerLine.init).filter { $0.kind == "PAGE" }
                #expect(seen.last?["doc"] == newDoc, "the follower's last PAGE: \(seen.last?.raw ?? "none")")

                // And it was saved: after kill -9 the room comes back as it was.
                let saved = try #require(status?.version)
                daemon.kill9()
                _ = try await daemon.waitForExit(timeout: .seconds(5))
                let second = try await workspace.startDaemon(documents: ["talk.txt"], arguments: arguments)
                let (_, again) = try await second.join()
                #expect(again["doc"] == newDoc && again.version == saved && again["epoch"] == hello["epoch"], "\(again)")
            }
        }
    }
}
