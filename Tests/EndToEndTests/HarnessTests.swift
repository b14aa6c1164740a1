import Foundation
import Testing

/// Checks of the harness itself, so a broken harness is not mistaken for a broken daemon.
@Suite("Harness", .timeLimit(.minutes(1)))
struct HarnessTests {
    @Test("the daemon starts with no blocked or ignored signals (else the signal tests would be meaningless)")
    func daemonSignalMaskIsClean() async throws {
        try await withDaemon(["a.txt": "one\n"]) { daemon, _ in
            let status = try readProcFile("/proc/\(daemon.pid)/status")
            let fields = Dictionary(uniqueKeysWithValues: status.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) : nil
            })
            #expect(fields["SigBlk"].flatMap { UInt64($0, radix: 16) } == 0, "blocked: \(fields["SigBlk"] ?? "?")")
        }
    }

    /// Foundation's `Process` sees its child end only when the end of a socket pair it gave the
    /// child (not close-on-exec) is closed everywhere. A child spawned by the harness at that moment
    /// from another test must not keep a copy, or that `Process` looks alive as long as this child.
    @Test("a spawned child holds none of our descriptors but 0-2, not even one that is not close-on-exec")
    func childInheritsOnlyStandardDescriptors() async throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)  // as Foundation makes it
        defer { close(pair[0]) }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        try #require(devNull >= 0)
        defer { close(devNull) }
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["10"], outputFD: devNull)
        defer { child.killAndReap() }
        var inheritable = stat()
        try #require(fstat(pair[1], &inheritable) == 0)
        close(pair[1])
        // What the child holds beyond 0-2 must not be ours. (While it starts, the dynamic loader
        // briefly holds a descriptor of its own, e.g. 3 for ld.so.cache: seen once on a loaded machine.)
        let fdDirectory = "/proc/\(child.pid)/fd"
        let held = try FileManager.default.contentsOfDirectory(atPath: fdDirectory).sorted()
        let targets = held.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\($0)")) ?? "?" }
        let beyondStandard = zip(held, targets).filter { !["0", "1", "2"].contains($0.0) }.map { "\($0.0) -> \($0.1)" }
        #expect(!targets.contains("socket:[\(inheritable.st_ino)]"), "the child holds the pair's end: \(beyondStandard)")
        #expect(!beyondStandard.contains { $0.contains("socket:") || $0.contains("pipe:") || $0.contains("anon_inode:") },
                "the child holds a socket, pipe or event descriptor beyond 0-2: \(beyondStandard)")
        #expect(Set(["0", "1", "2"]).isSubset(of: held), "the child's standard descriptors: \(held)")
        // Foundation's test: a read on the other end sees EOF once no process holds this end.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let received = recv(pair[0], &byte, 1, 0)
        #expect(received == 0, "no EOF while the child runs: it holds the other end of the pair")
    }

    @Test("without PAGESYNC_BIN_DIR, a debug test build runs the release binaries when all are there and newer than the sources")
    func releaseBinariesFoundWhenCurrent() throws {
        let workspace = try Workspace()
        defer { try? FileManager.default.removeItem(at: workspace.root) }
        let debug = workspace.url("build/debug"), release = workspace.url("build/release")
        try FileManager.default.createDirectory(at: debug, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: release, withIntermediateDirectories: true)
        let newest = try #require(Binaries.newestSourceDate())
        func stamp(_ names: [String], _ date: Date) throws {
            for name in names {
                let path = release.appendingPathComponent(name).path
                #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8)))
                try FileManager.default.setAttributes([.modificationDate: date, .posixPermissions: 0o755], ofItemAtPath: path)
            }
        }
        #expect(Binaries.currentRelease(besides: debug) == nil, "no release build")
        try stamp(Array(Binaries.names.dropLast()), newest.addingTimeInterval(60))
        #expect(Binaries.currentRelease(besides: debug) == nil, "one executable missing")
        try stamp([Binaries.names.last!], newest.addingTimeInterval(-60))
        #expect(Binaries.currentRelease(besides: debug) == nil, "one executable older than a source file")
        try stamp(Binaries.names, newest.addingTimeInterval(60))
        #expect(Binaries.currentRelease(besides: debug)?.path == release.path)
        #expect(Binaries.currentRelease(besides: release) == nil, "only a debug build looks beside itself")
    }
}
