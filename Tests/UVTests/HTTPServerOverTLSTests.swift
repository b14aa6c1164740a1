import Foundation
import Testing
import TestSupport
import UV

/// An ``HTTPServer`` whose connections are wrapped in server ``TLSConnection``s (HTTPS), on
/// 127.0.0.1, port 0: answers `GET /hello` with `hi`, anything else 404.
private func withHTTPSServer<T>(_ certs: TestCertificates, limits: HTTPLimits,
                                _ body: (_ loop: EventLoop, _ port: Int, _ server: @escaping @Sendable () async throws -> HTTPServerStatistics) async throws -> T) async throws -> T {
    let context = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile)
    return try await withRunningLoop { loop in
        let box = try await onLoop(loop) { () -> UncheckedHTTPSServer in
            let server = HTTPServer(loop: loop, listener: try TCPListener(loop: loop, host: "127.0.0.1", port: 0), limits: limits,
                                    wrap: { tcp in try? TLSConnection(tcp, loop: loop, context: context) }) { head in
                head.path == "/hello" ? .respond(.text(200, "hi")) : .respond(.text(404, "no \(head.path)"))
            }
            try server.start()
            return UncheckedHTTPSServer(server: server)
        }
        let port = try await onLoop(loop) { box.server.localAddress!.port }
        let result = try await body(loop, port) { try await onLoop(loop) { box.server.statistics } }
        try await onLoop(loop) { box.server.close() }
        return result
    }
}

private struct UncheckedHTTPSServer: @unchecked Sendable { let server: HTTPServer }

/// Connects over TLS (verifying the test CA), sends `request`, and returns what came back
/// decrypted, then `<eof>` (close_notify or FIN) or `<error ...>`.
private func httpsExchange(_ loop: EventLoop, port: Int, context: TLSContext, request: String) async throws -> String {
    try await awaitOnLoop(loop) { (once: Once<String>) in
        TLSConnection.connect(loop: loop, host: "127.0.0.1", port: port, context: context) { result in
            guard case .success(let connection) = result else { return once.resume(throwing: TestFailure("TLS connect failed")) }
            let received = Box([UInt8]())
            connection.startReading { event in
                switch event {
                case .data(let bytes): received.value.append(contentsOf: bytes)
                case .eof:
                    connection.close()
                    once.resume(returning: String(decoding: received.value, as: UTF8.self) + "<eof>")
                case .error(let error):
                    connection.close()
                    once.resume(returning: String(decoding: received.value, as: UTF8.self) + "<error \(error)>")
                }
            }
            connection.write(Array(request.utf8))
        }
    }
}

/// Connects over plain TCP, sends `bytes` (maybe none), and returns what came back until the
/// server closed.
func plainExchange(_ loop: EventLoop, port: Int, bytes: String) async throws -> [UInt8] {
    try await awaitOnLoop(loop) { (once: Once<[UInt8]>) in
        TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
            guard case .success(let connection) = result else { return once.resume(throwing: TestFailure("connect failed")) }
            let received = Box([UInt8]())
            connection.startReading { event in
                switch event {
                case .data(let bytes): received.value.append(contentsOf: bytes)
                case .eof, .error:
                    connection.close()
                    once.resume(returning: received.value)
                }
            }
            if !bytes.isEmpty { connection.write(Array(bytes.utf8)) }
        }
    }
}

@Suite("HTTPServer over TLS", .timeLimit(.minutes(1)))
struct HTTPServerOverTLSTests {
    @Test func requestsAreAnsweredOverTLSAndAClosingAnswerEndsWithCloseNotify() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let client = try TLSContext.client(caFile: certs.caFile)
        try await withHTTPSServer(certs, limits: HTTPLimits()) { loop, port, stats in
            let kept = try await httpsExchange(loop, port: port, context: client, request:
                "GET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(kept.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(kept)")
            #expect(kept.contains("\r\n\r\nhi"), "\(kept)")
            #expect(kept.contains("HTTP/1.1 404 Not Found\r\n"), "pipelined, in order: \(kept)")
            #expect(kept.hasSuffix("no /nope\n<eof>"), "the closing answer, then the end (close_notify): \(kept)")
            let statistics = try await stats()
            #expect(statistics.requests == 2 && statistics.timeouts == 0)
        }
    }

    @Test func aClientThatNeverSpeaksTLSIsClosedAfterTheHandshakeTimeout() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let limits = HTTPLimits(headTimeoutMilliseconds: 20_000, handshakeTimeoutMilliseconds: 500)
        try await withHTTPSServer(certs, limits: limits) { loop, port, stats in
            let started = ContinuousClock.now
            let silent = try await plainExchange(loop, port: port, bytes: "")
            let waited = ContinuousClock.now - started
            #expect(silent.isEmpty)
            #expect(waited >= .milliseconds(450) && waited < .seconds(5), "closed by the handshake timeout: \(waited)")
            #expect(try await stats().timeouts == 1)
            // Plain HTTP to the TLS port: no answer in clear text, closed at once.
            let plain = try await plainExchange(loop, port: port, bytes: "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(!String(decoding: plain, as: UTF8.self).contains("HTTP/1.1"), "\(plain)")
            #expect(try await stats().requests == 0)
        }
    }

    @Test func connectionsPastTheLimitAreClosedWithoutAnAnswer() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let client = try TLSContext.client(caFile: certs.caFile)
        try await withHTTPSServer(certs, limits: HTTPLimits(maxConnections: 1)) { loop, port, stats in
            let held = try await onLoop(loop) { () -> UncheckedTCP in
                let box = UncheckedTCP()
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in box.connection = try? result.get() }
                return box
            }
            try await Task.sleep(for: .milliseconds(200))
            // Its handshake fails (the connection is closed under it), or nothing is answered.
            let refused = try? await httpsExchange(loop, port: port, context: client, request: "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(refused?.contains("HTTP/1.1") != true, "\(refused ?? "handshake failed")")
            #expect(try await stats().refused == 1)
            try await onLoop(loop) { held.connection?.close() }
        }
    }
}

private final class UncheckedTCP: @unchecked Sendable { var connection: TCPConnection? }
