import Foundation
import Testing
import TestSupport
import UV

/// A TLS echo server on 127.0.0.1, port 0: greets with "HELLO\n" before the handshake is done
/// (the greeting must wait for it), then echoes. Returns its port.
private func startTLSEchoServer(_ loop: EventLoop, context: TLSContext) async throws -> Int {
    try await onLoop(loop) {
        let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
        try listener.listen { tcp in
            guard let connection = try? TLSConnection(tcp, loop: loop, context: context) else { return }
            connection.write(Array("HELLO\n".utf8))
            connection.startReading { event in
                switch event {
                case .data(let bytes): connection.write(bytes)
                case .eof: connection.shutdownAndClose()
                case .error: connection.close()
                }
            }
        }
        return listener.localAddress!.port
    }
}

/// Connects over TLS, writes `payload`, reads until `expected` bytes arrived; returns them.
private func tlsExchange(_ loop: EventLoop, port: Int, host: String = "127.0.0.1", context: TLSContext,
                         payload: [UInt8], expected: Int) async throws -> [UInt8] {
    try await awaitOnLoop(loop) { (once: Once<[UInt8]>) in
        TLSConnection.connect(loop: loop, host: host, port: port, context: context) { result in
            exchange(result, once: once, expecting: expected) { $0.write(payload) }
        }
    }
}

@Suite("TLS connections over loopback")
struct TLSConnectionTests {
    @Test func handshakeGreetingAndEcho() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile)
        let client = try TLSContext.client(caFile: certs.caFile)
        try await withRunningLoop { loop in
            let port = try await startTLSEchoServer(loop, context: server)
            let payload = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
            let reply = try await tlsExchange(loop, port: port, context: client, payload: payload, expected: 6 + payload.count)
            #expect(reply == Array("HELLO\n".utf8) + payload)
            let byName = try await tlsExchange(loop, port: port, host: "localhost", context: client, payload: [1, 2], expected: 8)
            #expect(byName == Array("HELLO\n".utf8) + [1, 2])
        }
    }

    @Test func wrongCAAndWrongHostFailTheConnectInOneLine() async throws {
        let certs = try TestCertificates(names: "DNS:pages.example.org")
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile)
        try await withRunningLoop { loop in
            let port = try await startTLSEchoServer(loop, context: server)
            await #expect(throws: UVError.self) {
                _ = try await tlsExchange(loop, port: port, context: try .client(caFile: certs.otherCAFile), payload: [1], expected: 1)
            }
            do {
                _ = try await tlsExchange(loop, port: port, context: try .client(caFile: certs.otherCAFile), payload: [1], expected: 1)
            } catch {
                #expect("\(error)" == "certificate is signed by an unknown CA (use --tls-ca FILE)")
            }
            do {
                _ = try await tlsExchange(loop, port: port, context: try .client(caFile: certs.caFile), payload: [1], expected: 1)
                Issue.record("127.0.0.1 accepted for a certificate of pages.example.org")
            } catch {
                #expect("\(error)" == "certificate is not for 127.0.0.1 (wrong host name)")
            }
        }
    }

    @Test func plaintextToTheTLSPortIsClosedPromptly() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile)
        try await withRunningLoop { loop in
            let port = try await startTLSEchoServer(loop, context: server)
            let received = try await plainExchange(loop, port: port, bytes: "STATUS\nNEXT\n")
            // No greeting in clear: at most a TLS alert record (content type 21), then the close.
            #expect(!String(decoding: received, as: UTF8.self).contains("HELLO"))
            if let first = received.first { #expect(first == 21) }
        }
    }

    @Test func aLoopbackPeerIsSeenAsLoopback() async throws {
        try await withRunningLoop { loop in
            let flags: [Bool] = try await awaitOnLoop(loop) { (once: Once<[Bool]>) in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { accepted in
                    once.resume(returning: [accepted.peerIsLoopback, accepted.isEncrypted])
                    accepted.close()
                    listener.close()
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    if case .success(let connection) = result { connection.close() }
                }
            }
            #expect(flags == [true, false])
        }
    }
}
