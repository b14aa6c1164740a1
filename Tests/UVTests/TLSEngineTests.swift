import Foundation
import Testing
import TestSupport
import UV

/// Two engines wired back to back in memory: no sockets.
private final class EnginePair {
    let client: TLSEngine
    let server: TLSEngine
    var clientReceived: [UInt8] = []
    var serverReceived: [UInt8] = []
    var clientOutcome: TLSEngine.ReadOutcome = .needsInput
    var serverOutcome: TLSEngine.ReadOutcome = .needsInput
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// With `outputScratch`, both engines encrypt into it (as two sessions on one loop do).
    init(client: TLSContext, server: TLSContext, serverName: String = "localhost",
         outputScratch: TLSOutputScratch? = nil) throws {
        self.client = try TLSEngine(context: client, serverName: serverName, outputScratch: outputScratch)
        self.server = try TLSEngine(context: server, serverName: nil, outputScratch: outputScratch)
    }

    /// A client trusting `certs`' CA and a server with its certificate: the usual pair.
    convenience init(_ certs: TestCertificates) throws {
        try self.init(client: .client(caFile: certs.caFile),
                      server: .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile))
    }

    deinit { scratch.deallocate() }

    /// Moves bytes both ways until neither side has output; returns the number of flights.
    @discardableResult
    func pump(limit: Int = 20) -> Int {
        var flights = 0
        while flights < limit && (client.outputCount > 0 || server.outputCount > 0) {
            flights += 1
            client.takeOutput { server.receive($0) }
            serverOutcome = server.read(into: scratch) { self.serverReceived.append(contentsOf: $0); return true }
            server.takeOutput { client.receive($0) }
            clientOutcome = client.read(into: scratch) { self.clientReceived.append(contentsOf: $0); return true }
        }
        return flights
    }
}

@Suite("TLS engine (buffers in memory, no sockets)")
struct TLSEngineTests {
    @Test func handshakeThenDataBothWays() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(certs)
        #expect(pair.client.state == .handshaking)
        #expect(pair.client.outputCount > 0, "a client has its ClientHello ready at once")
        // Written before the handshake: kept, counted, sent when it completes.
        Array("HELLO\n".utf8).withUnsafeBytes { pair.server.send($0) }
        #expect(pair.server.pendingPlaintextCount == 6)
        pair.pump()
        #expect(pair.client.state == .established)
        #expect(pair.server.state == .established)
        #expect(pair.client.protocolVersion == "TLSv1.3")
        #expect(pair.server.pendingPlaintextCount == 0)
        #expect(pair.clientReceived == Array("HELLO\n".utf8))
        Array("next\n".utf8).withUnsafeBytes { pair.client.send($0) }
        pair.pump()
        #expect(pair.serverReceived == Array("next\n".utf8))
        // Idle after traffic: no ciphertext buffer stays allocated on either side.
        #expect(pair.server.bufferCapacity == 0)
        #expect(pair.client.bufferCapacity == 0)
    }

    @Test func largeWritesArriveWholeAndInOrder() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(certs)
        pair.pump()
        let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        payload.withUnsafeBytes { pair.server.send($0) }
        pair.pump()
        #expect(pair.clientReceived == payload)
    }

    @Test(arguments: [64 * 1024, 100])
    func enginesSharingAnOutputScratchDeliverEverythingInOrder(scratchBytes: Int) throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let scratch = TLSOutputScratch(capacity: scratchBytes)
        let pair = try EnginePair(
            client: try .client(caFile: certs.caFile),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile),
            outputScratch: scratch)
        pair.pump()
        #expect(pair.client.state == .established)
        #expect(pair.server.state == .established)
        #expect(scratch.isFree, "taken output frees the scratch")
        let line = Array("PAGE 2 of 9 version=4\n".utf8)
        var expected: [UInt8] = []
        for _ in 0..<50 {
            line.withUnsafeBytes { pair.server.send($0) }
            expected += line
        }
        #expect(pair.server.outputCount > 0)
        #expect(pair.server.bufferCapacity == 0 || scratchBytes < 64 * 1024,
                "small records wait in the shared scratch, not in storage of the session's own")
        let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        payload.withUnsafeBytes { pair.server.send($0) }
        expected += payload
        Array("next\n".utf8).withUnsafeBytes { pair.client.send($0) }
        pair.pump()
        #expect(pair.clientReceived == expected)
        #expect(pair.serverReceived == Array("next\n".utf8))
        #expect(scratch.isFree)
        #expect(pair.server.bufferCapacity == 0)
        #expect(pair.client.bufferCapacity == 0)
    }

    @Test func pausedReadKeepsTheRestForLater() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(certs)
        pair.pump()
        for word in ["one\n", "two\n", "three\n"] { Array(word.utf8).withUnsafeBytes { pair.server.send($0) } }
        pair.server.takeOutput { pair.client.receive($0) }
        var chunks: [[UInt8]] = []
        let first = pair.client.read(into: pair.scratch) { chunks.append(Array($0)); return false }
        #expect(first == .paused)
        #expect(chunks == [Array("one\n".utf8)])
        #expect(pair.client.hasUnreadInput)
        let rest = pair.client.read(into: pair.scratch) { chunks.append(Array($0)); return true }
        #expect(rest == .needsInput)
        #expect(chunks.flatMap { $0 } == Array("one\ntwo\nthree\n".utf8))
        #expect(!pair.client.hasUnreadInput)
    }

    @Test func closeNotifyEndsTheSession() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(certs)
        pair.pump()
        pair.server.shutdown()
        #expect(pair.server.state == .closed)
        pair.pump()
        #expect(pair.clientOutcome == .peerClosed)
        #expect(pair.client.state == .closed)
    }

    @Test func afterThePeersCloseNotifyRepliesStillGoOutThenOurs() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(certs)
        pair.pump()
        // A line and close_notify in one flight, as `printf 'next\n' | socat - OPENSSL:...` sends them.
        Array("next\n".utf8).withUnsafeBytes { pair.client.send($0) }
        pair.client.shutdown()
        pair.client.takeOutput { pair.server.receive($0) }
        pair.serverOutcome = pair.server.read(into: pair.scratch) { pair.serverReceived.append(contentsOf: $0); return true }
        #expect(pair.serverReceived == Array("next\n".utf8))
        #expect(pair.serverOutcome == .peerClosed)
        #expect(pair.server.state == .closed)
        // The reply is encrypted and sent (the client's half is closed, not ours)...
        Array("OK page=2\n".utf8).withUnsafeBytes { pair.server.send($0) }
        #expect(pair.server.state == .closed && pair.server.failure == nil)
        let reply = pair.server.outputCount
        #expect(reply >= "OK page=2\n".utf8.count + 16, "a record with the reply: \(reply) bytes")
        // ... then our close_notify; after it nothing more is sent.
        pair.server.shutdown()
        let closeNotify = pair.server.outputCount - reply
        #expect(closeNotify > 0)
        Array("late\n".utf8).withUnsafeBytes { pair.server.send($0) }
        #expect(pair.server.outputCount == reply + closeNotify)
    }

    @Test func unknownCAIsRefusedInOneLine() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(
            client: try .client(caFile: certs.otherCAFile),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile))
        pair.pump()
        #expect(pair.client.state == .failed)
        #expect(pair.client.failure?.message == "certificate is signed by an unknown CA (use --tls-ca FILE)")
        #expect(pair.server.state == .failed, "the client's alert ends the server's handshake too")
    }

    @Test func wrongHostNameIsRefusedInOneLine() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(
            client: try .client(caFile: certs.caFile),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile),
            serverName: "pages.example.org")
        pair.pump()
        #expect(pair.client.failure?.message == "certificate is not for pages.example.org (wrong host name)")
        let byAddress = try EnginePair(
            client: try .client(caFile: certs.caFile),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile),
            serverName: "192.0.2.7")
        byAddress.pump()
        #expect(byAddress.client.failure?.message == "certificate is not for 192.0.2.7 (wrong host name)")
    }

    @Test func insecureClientAcceptsAnyCertificate() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(
            client: try .client(verifyPeer: false),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile),
            serverName: "pages.example.org")
        pair.pump()
        #expect(pair.client.state == .established)
    }

    @Test func plaintextToAServerFailsTheHandshake() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSEngine(context: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile))
        Array("next\n".utf8).withUnsafeBytes { server.receive($0) }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { scratch.deallocate() }
        let outcome = server.read(into: scratch) { _ in true }
        guard case .failed(let error) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(error.message.hasPrefix("TLS handshake failed: "), "\(error)")
        #expect(server.state == .failed)
    }

    @Test func tls13FloorRefusesATLS12Client() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let pair = try EnginePair(
            client: try .client(caFile: certs.caFile, maximumVersion: .v1_2),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile, minimumVersion: .v1_3))
        pair.pump()
        #expect(pair.server.state == .failed)
        #expect(pair.client.state == .failed)
        let ok = try EnginePair(
            client: try .client(caFile: certs.caFile, maximumVersion: .v1_2),
            server: try .server(certificateFile: certs.certificateFile, keyFile: certs.keyFile))
        ok.pump()
        #expect(ok.client.state == .established)
        #expect(ok.client.protocolVersion == "TLSv1.2")
    }

    @Test func clientCertificatesAreRequiredWhenTheServerHasACA() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile, clientCAFile: certs.caFile)
        let anonymous = try EnginePair(client: try .client(caFile: certs.caFile), server: server)
        anonymous.pump()
        #expect(anonymous.server.state == .failed)
        let leaf = try certs.makeLeaf("client")
        let identified = try EnginePair(
            client: try .client(caFile: certs.caFile, certificateFile: leaf.cert, keyFile: leaf.key), server: server)
        identified.pump()
        #expect(identified.server.state == .established)
        #expect(identified.client.state == .established)
    }

    /// The client learns why the server refused it from the server's alert (with TLS 1.3, on
    /// its first read after its own handshake finished), in words that say what to do.
    @Test func aRefusedClientSaysWhyInWordsItActsOn() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile, clientCAFile: certs.caFile)
        let (_, expired, stranger) = try certs.makeClientIdentities().all
        let cases: [((cert: String, key: String)?, String)] = [
            (nil, "the server asks for a client certificate"),
            (expired, "the server refused this client certificate: it, or a certificate in its chain, has expired"),
            (stranger, "the server does not trust this client certificate (its CA is not one the server knows)"),
        ]
        for (identity, message) in cases {
            let pair = try EnginePair(client: try .client(caFile: certs.caFile, certificateFile: identity?.cert, keyFile: identity?.key),
                                      server: server)
            pair.pump()
            guard case .failed(let error) = pair.clientOutcome else {
                Issue.record("the client did not fail: \(pair.clientOutcome)")
                continue
            }
            #expect(error.message == message, "\(error)")
            #expect(pair.client.state == .failed)
        }
        // Errors that are not such an alert keep OpenSSL's words.
        let other = TLSError("TLS error: decryption failed", reason: "decryption failed")
        #expect(TLSEngine.describeServerAlert(other) == other)
        #expect(TLSEngine.describeServerAlert(TLSError("no reason")) == TLSError("no reason"))
    }

    /// A client that does not verify (`--tls-insecure`) still gets a verification result from
    /// OpenSSL; when its handshake fails for another reason, that is what it is told.
    @Test func anInsecureClientIsToldWhyItsHandshakeFailedNotWhatItSkipped() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let server = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: certs.keyFile, clientCAFile: certs.caFile)
        // TLS 1.2: the server's refusal of a client without a certificate ends the handshake.
        let pair = try EnginePair(client: try .client(verifyPeer: false, maximumVersion: .v1_2), server: server)
        pair.pump()
        guard case .failed(let error) = pair.clientOutcome else {
            Issue.record("the client did not fail: \(pair.clientOutcome)")
            return
        }
        #expect(error.message == "TLS handshake failed: sslv3 alert handshake failure", "\(error)")
    }

    @Test func aClientCertificateAndItsKeyAreCheckedWhenTheContextIsMade() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let leaf = try certs.makeLeaf("client")
        let other = try certs.makeLeaf("other")
        do {
            _ = try TLSContext.client(caFile: certs.caFile, certificateFile: leaf.cert, keyFile: other.key)
            Issue.record("a key that does not match was accepted")
        } catch {
            #expect(error.message.hasPrefix("key \(other.key) does not match certificate \(leaf.cert)"), "\(error)")
        }
        #expect(throws: TLSError("cannot read key /nonexistent/key.pem: No such file or directory")) {
            try TLSContext.client(caFile: certs.caFile, certificateFile: leaf.cert, keyFile: "/nonexistent/key.pem")
        }
        #expect(throws: TLSError("a client certificate needs its key")) {
            try TLSContext.client(caFile: certs.caFile, certificateFile: leaf.cert)
        }
        #expect(throws: TLSError("a client key needs its certificate")) {
            try TLSContext.client(caFile: certs.caFile, keyFile: leaf.key)
        }
    }

    @Test func contextErrorsNameTheFile() throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        #expect(throws: TLSError("cannot read certificate /nonexistent/cert.pem: No such file or directory")) {
            try TLSContext.server(certificateFile: "/nonexistent/cert.pem", keyFile: certs.keyFile)
        }
        let other = try certs.makeLeaf("other")
        do {
            _ = try TLSContext.server(certificateFile: certs.certificateFile, keyFile: other.key)
            Issue.record("a key that does not match was accepted")
        } catch {
            #expect(error.message.hasPrefix("key \(other.key) does not match certificate \(certs.certificateFile)"), "\(error)")
        }
        do {
            _ = try TLSContext.server(certificateFile: certs.keyFile, keyFile: certs.keyFile)
            Issue.record("a key file was accepted as a certificate")
        } catch {
            #expect(error.message.hasPrefix("cannot use certificate \(certs.keyFile)"), "\(error)")
        }
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("pagesync-junk-\(getpid()).pem")
        try "junk\n".write(to: junk, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: junk) }
        do {
            _ = try TLSContext.server(certificateFile: junk.path, keyFile: certs.keyFile)
            Issue.record("a file that is not PEM was accepted as a certificate")
        } catch {
            // The cause OpenSSL found first, not its wrapper ("PEM lib").
            #expect(error.message == "cannot use certificate \(junk.path): not a PEM file (no -----BEGIN line)", "\(error)")
        }
    }

    @Test(arguments: [
        (10, "certificate has expired"),
        (9, "certificate is not valid yet (check the clock)"),
        (62, "certificate is not for h (wrong host name)"),
        (20, "certificate is signed by an unknown CA (use --tls-ca FILE)"),
        (18, "certificate is signed by an unknown CA (use --tls-ca FILE)"),
    ])
    func verificationResultsInWords(code: Int32, text: String) {
        #expect(TLSEngine.describeVerification(code, host: "h") == text)
    }
}
