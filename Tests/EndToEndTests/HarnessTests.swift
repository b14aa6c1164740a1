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
    @Test("a spawned child holds no descriptor but 0-2, not even one that is not close-on-exec")
    func childInheritsOnlyStandardDescriptors() async throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)  // as Foundation makes it
        defer { close(pair[0]) }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        try #require(devNull >= 0)
        defer { close(devNull) }
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["10"], outputFD: devNull)
        defer { child.killAndReap() }
        close(pair[1])
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd").sorted()
        #expect(descriptors == ["0", "1", "2"], "the child holds descriptors \(descriptors)")
        // Foundation's test: a read on the other end sees EOF once no process holds this end.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let received = recv(pair[0], &byte, 1, 0)
        #expect(received == 0, "no EOF while the child runs: it holds the other end of the pair")
    }
}
