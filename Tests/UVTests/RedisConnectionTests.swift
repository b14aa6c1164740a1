import Foundation
import Testing
import UV

/// A loopback port with nothing listening on it (bound, then closed: a connect is refused).
private func refusingPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// What a connect attempt reported, and the connection, kept alive until then.
private final class Attempt: @unchecked Sendable {  // loop thread only
    var connection: RedisConnection?
    var timer: UV.Timer?
}

@Suite struct RedisConnectionTests {
    /// hiredis 0.14's libuv adapter dropped the poll error of a refused connect, so the
    /// connect was never reported (the daemon noticed only through its own 3 s limit): now
    /// `onConnect` gets the reason. Two seconds is a deadline for "reported at all".
    @Test func aRefusedConnectIsReportedByOnConnect() async throws {
        let port = try refusingPort()
        let outcome: String = try await withRunningLoop { loop in
            try await awaitOnLoop(loop) { (once: Once<String>) in
                let attempt = Attempt()
                let connection = RedisConnection(loop: loop)
                attempt.connection = connection
                let timer = UV.Timer(loop: loop)
                attempt.timer = timer
                timer.start(afterMilliseconds: 2000) {
                    attempt.connection?.close()
                    attempt.connection = nil
                    once.resume(returning: "not reported within 2 s")
                }
                if let notStarted = connection.connect(to: .tcp(host: "127.0.0.1", port: port), onConnect: { reason in
                    attempt.timer?.close()
                    attempt.timer = nil
                    attempt.connection = nil
                    once.resume(returning: reason.map { "failed: \($0)" } ?? "connected")
                }, onDisconnect: { _ in }) {
                    timer.close()
                    once.resume(returning: "not started: \(notStarted)")
                }
            }
        }
        #expect(outcome.hasPrefix("failed: "), "\(outcome)")
        #expect(outcome.lowercased().contains("refused"), "\(outcome)")
    }
}
