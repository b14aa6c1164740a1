import TestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Cycles of: the daemon under an injected fault (``FaultShim``) with pipelining writers in
/// every room, killed with SIGKILL at the injected point (or after a while), then a clean start
/// whose rooms are checked against everything any client was told:
/// - per room, the version served is at least the last acknowledged one under the same epoch,
///   and the same page when it is that version, or else the epoch is new;
/// - no version is ever seen with two different pages under one epoch (`OK`, `PAGE`, `ROOMS`).
/// The state directory carries over from cycle to cycle, so compactions and rewrites happen
/// on a journal with a history. Figures go to ``Report``.
struct FaultTorture {
    /// One fault to inject: `PAGESYNC_FAULT`'s spec, and what it stands for.
    struct Fault: Sendable {
        var spec: String
        var what: String
    }

    /// The faults of the issue this torture was made for, in turn.
    static let faults: [Fault] = [
        Fault(spec: "dirsync:1:EIO", what: "the directory sync after a compaction's rename"),
        Fault(spec: "rename:1:EIO", what: "a compaction's rename"),
        Fault(spec: "fdatasync:3:EIO", what: "the third fdatasync"),
        Fault(spec: "pwrite:400:ENOSPC:short", what: "ENOSPC in the middle of a record (a short write first)"),
        Fault(spec: "pwrite:1:ENOSPC:2%", what: "2% of writes ENOSPC, the compacted file's too"),
        Fault(spec: "pwrite:1:EINTR:20%,fdatasync:1:EINTR:20%", what: "EINTR on writes and syncs"),
        Fault(spec: "fdatasync:2:EIO:always", what: "every sync fails from the second on"),
        Fault(spec: "pwrite:300:ENOSPC:always", what: "the disk full from the 300th write on"),
        Fault(spec: "ftruncate:3:EIO:always", what: "a file that cannot be cut back (from the third ftruncate: the lock file and the load come first)"),
    ]

    /// The free space the daemon is told it has (a small disk): the journal is compacted once
    /// its records take as much, about every 600 changes here, so every cycle compacts.
    static let smallDisk = 64 << 10

    /// What a run found.
    struct Report: Sendable, CustomStringConvertible {
        var durability: String
        var cycles = 0
        var faultsInjected = 0
        var killedAtFault = 0
        var acknowledged = 0
        var newEpochs = 0
        var refusedToStart = 0
        var violations: [String] = []

        var description: String {
            "durability \(durability): \(cycles) cycles, \(faultsInjected) faults injected, \(killedAtFault) SIGKILLs at an injected point, \(acknowledged) changes acknowledged, \(newEpochs) new epochs, \(refusedToStart) refused to start under the fault, \(violations.count) violations"
        }
    }

    let workspace: Workspace
    let durability: String
    let rooms = 8
    var random: SeededGenerator

    init(workspace: Workspace, durability: String, seed: UInt64) {
        self.workspace = workspace
        self.durability = durability
        self.random = SeededGenerator(seed: seed)
    }

    /// What clients were told, per room: the highest acknowledged state in each epoch, and the
    /// page of every (epoch, version) seen.
    private struct Told {
        var highest: [String: (epoch: String, version: UInt64, page: Int)] = [:]
        var pages: [String: Int] = [:]
        var violations: [String] = []
        var acknowledged = 0

        mutating func saw(room: String, epoch: String, version: UInt64, page: Int, acknowledged isAck: Bool, cycle: Int) {
            let key = "\(room)@\(epoch)#\(version)"
            if let before = pages[key], before != page {
                violations.append("cycle \(cycle): room \(room) version \(version) of epoch \(epoch) was page \(before) and then page \(page)")
            }
            pages[key] = page
            guard isAck else { return }
            acknowledged += 1
            if let h = highest[room], h.epoch == epoch, h.version >= version { return }
            highest[room] = (epoch, version, page)
        }
    }

    mutating func run(cycles: Int) async throws -> Report {
        var report = Report(durability: durability)
        var told = Told()
        // Names of 32 characters (the longest), so records are large and a compaction (past
        // 1 MiB) comes within each cycle.
        let names = (0..<rooms).map { "r\($0)-" + String(repeating: "x", count: 29) }
        for name in names { _ = try workspace.write("\(name).txt", Documents.formFeed(pages: 7, prefix: name)) }
        let documents = names.map { "\($0).txt" }
        let log = workspace.url("faults.log").path
        // A first clean start makes the state dir, so that a fault's count starts on an
        // existing journal (the first directory sync is then a compaction's).
        try await check(cycle: -1, fault: Fault(spec: "", what: "none"), killAfter: 0, documents: documents, told: &told, report: &report)
        report.cycles = 0
        for cycle in 0..<cycles {
            let fault = Self.faults[cycle % Self.faults.count]
            let killAfter = Int(random.next() % 80)
            let before = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let environment = try FaultShim.environment(
                spec: fault.spec, path: workspace.stateDir.path, killAfter: killAfter, log: log, seed: random.next(),
                free: Self.smallDisk)
            let daemon: Daemon
            do {
                daemon = try await workspace.startDaemon(
                    documents: documents, arguments: ["--wrap", "--durability", durability], environment: environment)
            } catch {
                // A fault at start may stop it (a journal that cannot be read or cut): nothing
                // was acknowledged, and the clean start below still checks every room.
                report.refusedToStart += 1
                try await check(cycle: cycle, fault: fault, killAfter: killAfter, documents: documents, told: &told, report: &report)
                continue
            }
            daemon.expectExitWithoutSignal()
            let results = Observations()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for name in names {
                    group.addTask { try await Self.write(room: name, daemon: daemon, results: results) }
                }
                group.addTask {
                    // A fault that never comes (a compaction not reached): killed after a while.
                    let deadline = ContinuousClock.now + .milliseconds(2500)
                    while daemon.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                    if daemon.isRunning { daemon.kill9() }
                }
                try await group.waitForAll()
            }
            _ = try await daemon.waitForExit(timeout: .seconds(10))
            let after = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let added = after.dropFirst(before.count).split(separator: "\n")
            report.faultsInjected += added.filter { $0.hasPrefix("inject") }.count
            report.killedAtFault += added.filter { $0.hasPrefix("kill") }.count
            for (room, epoch, version, page, ack) in results.all {
                told.saw(room: room, epoch: epoch, version: version, page: page, acknowledged: ack, cycle: cycle)
            }

            try await check(cycle: cycle, fault: fault, killAfter: killAfter, documents: documents, told: &told, report: &report)
        }
        report.acknowledged = told.acknowledged
        report.violations = told.violations
        return report
    }

    /// A clean start: every room against what was told.
    private func check(cycle: Int, fault: Fault, killAfter: Int, documents: [String], told: inout Told, report: inout Report) async throws {
        let clean = try await workspace.startDaemon(documents: documents, arguments: ["--wrap", "--durability", durability])
        let (client, _) = try await clean.join(label: "check-\(cycle)")
        let reply = try await client.command("ROOMS")
        for line in reply.lines {
            let state = ServerLine("ROOM " + line)
            guard let room = state.words.first, let epoch = state["epoch"], let version = state.version, let page = state.page else {
                told.violations.append("cycle \(cycle): unreadable ROOMS line \(line)")
                continue
            }
            if let h = told.highest[room] {
                if h.epoch != epoch {
                    report.newEpochs += 1
                    told.highest[room] = nil
                } else if version < h.version {
                    told.violations.append("cycle \(cycle) (\(fault.spec), kill after \(killAfter)): room \(room) acknowledged v\(h.version), served v\(version) under the same epoch")
                }
            }
            told.saw(room: room, epoch: epoch, version: version, page: page, acknowledged: true, cycle: cycle)
        }
        client.close()
        clean.kill9()
        _ = try await clean.waitForExit(timeout: .seconds(10))
        report.cycles += 1
    }

    /// One writer: joins `room` and sends NEXT after NEXT, one at a time (each is its own
    /// record: the changes of one loop turn to one room are one record), until the connection ends,
    /// recording each `OK` (acknowledged) and `PAGE` (seen) with the room's epoch.
    private static func write(room: String, daemon: Daemon, results: Observations) async throws {
        guard let client = try? await daemon.connect(label: "writer-\(room)") else { return }
        defer { client.close() }
        let name = "w" + room.dropFirst()
        guard (try? await client.readLineOrEOF()) != nil, (try? await client.send(lines: ["NAME \(name)", "JOIN \(room)"])) != nil else { return }
        var epoch = ""
        var outstanding = 0
        var joined = false
        while true {
            if joined && outstanding == 0 {
                guard (try? await client.send("NEXT")) != nil else { return }
                outstanding = 1
            }
            guard let text = try? await client.readLineOrEOF() else { return }
            let line = ServerLine(text)
            switch line.kind {
            case "OK" where line.words.first == "NAME":
                break
            case "OK" where line.words.first == "JOIN":
                epoch = line["epoch"] ?? ""
                joined = true
            case "OK":
                outstanding -= 1
                if let version = line.version, let page = line.page {
                    results.add((room, epoch, version, page, true))
                }
            case "ERR":
                outstanding -= 1
            case "PAGE":
                if let e = line["epoch"], let version = line.version, let page = line.page, line["room"] == room {
                    epoch = e
                    results.add((room, e, version, page, false))
                }
            default:
                break
            }
        }
    }
}

/// What the writers saw: (room, epoch, version, page, acknowledged), from several tasks.
final class Observations: Sendable {
    private let seen = Mutex<[(String, String, UInt64, Int, Bool)]>([])
    func add(_ item: (String, String, UInt64, Int, Bool)) { seen.withLock { $0.append(item) } }
    var all: [(String, String, UInt64, Int, Bool)] { seen.withLock { $0 } }
}

