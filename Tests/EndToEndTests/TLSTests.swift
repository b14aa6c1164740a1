import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The TLS port from the daemon's `listening for TLS on 127.0.0.1:<port>` line.
func tlsPort(_ daemon: Daemon) async throws -> UInt16 {
    let pattern = /listening for TLS on (?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/
    for _ in 0..<250 {
        if let match = daemon.stderr.firstMatch(of: pattern), let port = UInt16(match.1) { return port }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw HarnessError("pagesyncd did not log `listening for TLS on`; stderr:\n\(daemon.stderr)")
}

private func sh(_ script: String, in workspace: Workspace) async throws -> PagerTestProcessResult {
    try await runPagerTestProcess("/bin/sh", ["-c", script], in: workspace)
}

/// A non-loopback address of this machine, for tests of what happens off loopback.
private func nonLoopbackAddress() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var entry = list
    while let current = entry {
        if let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) {
            var host = [CChar](repeating: 0, count: 64)
            if getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !text.hasPrefix("127.") { return text }
            }
        }
        entry = current.pointee.ifa_next
    }
    return nil
}

@Suite("TLS", .timeLimit(.minutes(2)))
struct TLSTests {
    static let fivePages = ["doc.txt": Documents.formFeed(pages: 5)] as KeyValuePairs

    static func tlsArguments(_ certs: TestCertificates, listen: String = "127.0.0.1:0") -> [String] {
        ["--tls-listen", listen, "--tls-cert", certs.certificateFile, "--tls-key", certs.keyFile]
    }

    @Test("openssl s_client -quiet does what nc does: greeting, commands, replies, BYE")
    func sClientSpeaksTheProtocol() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: Self.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            let result = try await sh(
                "printf 'NEXT\\nSTATUS\\nQUIT\\n' | openssl s_client -quiet -verify_return_error -CAfile \(shellQuoted(certs.caFile)) -connect 127.0.0.1:\(port) 2>/dev/null",
                in: workspace)
            #expect(result.status == 0, "\(result.output)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("HELLO pagesync/1 ") == true, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("OK page=2 ") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("OK room=doc page=2 ") && $0.contains("clients=1") }, "\(lines)")
            #expect(lines.last == "OK BYE", "\(lines)")
        }
    }

    @Test("plaintext bytes sent to the TLS port get the connection closed at once")
    func plaintextToTheTLSPortIsClosed() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: Self.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            // nc ends when the server closes; `timeout` (exit 124) catches a server that does not.
            let result = try await sh("printf 'STATUS\\nNEXT\\n' | timeout 10 nc 127.0.0.1 \(port) | od -An -c | head -c 200", in: workspace)
            #expect(!result.output.contains("H   E   L   L   O"), "\(result.output)")
            let status = try await sh("printf 'STATUS\\n' | timeout 10 nc 127.0.0.1 \(port) >/dev/null; echo status=$?", in: workspace)
            #expect(status.output.contains("status=0"), "\(status.output)")
            // And the room did not move.
            let (plain, hello) = try await daemon.join()
            #expect(hello.fields["page"] == "1")
            plain.close()
        }
    }

    @Test("socat - OPENSSL: as README shows it: lines sent before its close_notify get their replies")
    func socatHalfCloseGetsTheReplies() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/socat") else {
            cannotRunHere(skipped: "socat is not installed", underCI: "socat is not installed (scripts/test installs it)")
            return
        }
        let certs = try TestCertificates()
        defer { certs.remove() }
        // At the end of its input socat sends close_notify and reads on, as `nc -N` half-closes.
        // With --durability always the OK waits for an fsync, so the close_notify is always in
        // before the reply is written. (-t 10: socat's default 0.5 s wait for the reply is not
        // the subject here.)
        // (Eight times: when the close_notify comes in after the reply left, nothing is lost.)
        let tenPages = ["doc.txt": Documents.formFeed(pages: 10)] as KeyValuePairs
        try await withDaemon(tenPages, arguments: Self.tlsArguments(certs) + ["--durability", "always"]) { daemon, workspace in
            let port = try await tlsPort(daemon)
            for page in 2...9 {
                let result = try await sh(
                    "printf 'next\\n' | timeout 20 socat -t 10 - OPENSSL:127.0.0.1:\(port),cafile=\(shellQuoted(certs.caFile))",
                    in: workspace)
                let lines = result.output.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("HELLO pagesync/1 ") == true, "\(lines)")
                #expect(lines.contains { $0.hasPrefix("OK page=\(page) ") }, "the reply to NEXT: \(lines)")
            }
        }
    }

    @Test("--tls-ca: a client with no certificate, an expired one or one from another CA is refused with the reason in the log")
    func clientCertificatesRefusedWithTheirReason() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let (good, expired, stranger) = try certs.makeClientIdentities().all
        let arguments = Self.tlsArguments(certs) + ["--tls-ca", certs.caFile, "--log-level", "debug"]
        try await withDaemon(Self.fivePages, arguments: arguments) { daemon, workspace in
            let port = try await tlsPort(daemon)
            func connect(_ pair: (cert: String, key: String)?) async throws -> String {
                let identity = pair.map { " -cert \(shellQuoted($0.cert)) -key \(shellQuoted($0.key))" } ?? ""
                return try await sh(
                    "printf 'QUIT\\n' | timeout 20 openssl s_client -quiet -CAfile \(shellQuoted(certs.caFile))\(identity) -connect 127.0.0.1:\(port) 2>/dev/null",
                    in: workspace).output
            }
            let accepted = try await connect(good)
            #expect(accepted.hasPrefix("HELLO pagesync/1 ") && accepted.contains("OK BYE"), "\(accepted)")
            for (pair, reason) in [(expired, "client certificate has expired"),
                                   (stranger, "client certificate is not signed by a trusted CA"),
                                   (nil, "peer did not return a certificate")] {
                let refused = try await connect(pair)
                #expect(!refused.contains("HELLO"), "\(refused)")
                try await TLSOperationsTests.waitForLog(daemon, "disconnected: TLS handshake failed: \(reason)")
            }
            #expect(!daemon.stderr.contains("certificate verify failed"), "\(daemon.stderr)")
        }
    }

    @Test("the pager presents --tls-cert and --tls-key to a daemon with --tls-ca; without them, or with one refused, it says why in one line")
    func pagerPresentsAClientCertificate() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let (good, expired, stranger) = try certs.makeClientIdentities().all
        try await withDaemon(Self.fivePages, arguments: Self.tlsArguments(certs) + ["--tls-ca", certs.caFile]) { daemon, workspace in
            let port = try await tlsPort(daemon)
            let pager = try Binaries.path(of: "pagesync")
            let server = ["tls://127.0.0.1:\(port)", "--tls-ca", certs.caFile]
            let accepted = try await runPagerTestProcess(pager, server + ["--tls-cert", good.cert, "--tls-key", good.key], in: workspace)
            #expect(accepted.status == 0, "\(accepted.output)")
            #expect(accepted.output.contains("this is page 1"), "\(accepted.output)")
            // --tls-cert alone implies TLS: the plain address is reached over TLS.
            let implied = try await runPagerTestProcess(
                pager, ["127.0.0.1:\(port)", "--tls-ca", certs.caFile, "--tls-cert", good.cert, "--tls-key", good.key], in: workspace)
            #expect(implied.status == 0, "\(implied.output)")
            #expect(implied.output.contains("this is page 1"), "\(implied.output)")

            for (identity, reason) in [(nil, "the server asks for a client certificate (use --tls-cert FILE and --tls-key FILE)"),
                                       (expired, "the server refused this client certificate: it, or a certificate in its chain, has expired"),
                                       (stranger, "the server does not trust this client certificate (its CA is not one the server knows)")] {
                let arguments = server + (identity.map { ["--tls-cert", $0.cert, "--tls-key", $0.key] } ?? [])
                let refused = try await runPagerTestProcess(pager, arguments, in: workspace)
                #expect(refused.status != 0, "\(refused.output)")
                #expect(refused.output.contains(reason), "\(refused.output)")
                #expect(!refused.output.contains("this is page"), "\(refused.output)")
                #expect(refused.output.split(separator: "\n").count == 1, "one line: \(refused.output)")
            }

            let alone = try await runPagerTestProcess(pager, server + ["--tls-cert", good.cert], in: workspace)
            #expect(alone.status == 64, "\(alone.output)")
            #expect(alone.output.contains("--tls-cert needs --tls-key: the private key of the certificate"), "\(alone.output)")
            let keyAlone = try await runPagerTestProcess(pager, server + ["--tls-key", good.key], in: workspace)
            #expect(keyAlone.status == 64, "\(keyAlone.output)")
            #expect(keyAlone.output.contains("--tls-key needs --tls-cert: the certificate the key belongs to"), "\(keyAlone.output)")
            let mismatched = try await runPagerTestProcess(pager, server + ["--tls-cert", good.cert, "--tls-key", stranger.key], in: workspace)
            #expect(mismatched.status != 0)
            #expect(mismatched.output.contains("key \(stranger.key) does not match certificate \(good.cert)"), "\(mismatched.output)")
            #expect(mismatched.output.split(separator: "\n").count == 1, "\(mismatched.output)")
        }
    }

    @Test("TLS set up wrong: the daemon exits with one clear line instead of serving without it")
    func neverFailsOpen() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withWorkspace { workspace in
            let bin = try Binaries.pagesyncd()
            let missing = try await runPagerTestProcess(bin, [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
                "--tls-listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", certs.keyFile,
            ], in: workspace)
            #expect(missing.status != 0)
            #expect(missing.output.contains("TLS: cannot read certificate /nonexistent/cert.pem: No such file or directory"), "\(missing.output)")
            #expect(!missing.output.contains("listening on"), "\(missing.output)")
            #expect(missing.output.split(separator: "\n").count == 1, "one line, before the state is touched: \(missing.output)")
            let junk = workspace.url("junk.pem")
            try "junk\n".write(to: junk, atomically: true, encoding: .utf8)
            let notPEM = try await runPagerTestProcess(bin, [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
                "--tls-listen", "127.0.0.1:0", "--tls-cert", junk.path, "--tls-key", certs.keyFile,
            ], in: workspace)
            #expect(notPEM.status != 0)
            #expect(notPEM.output.split(separator: "\n").count == 1, "\(notPEM.output)")
            #expect(notPEM.output.contains("TLS: cannot use certificate \(junk.path): not a PEM file (no -----BEGIN line)"), "\(notPEM.output)")
            let noKey = try await runPagerTestProcess(bin, [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
                "--tls-listen", "127.0.0.1:0", "--tls-cert", certs.certificateFile,
            ], in: workspace)
            #expect(noKey.status == 78, "\(noKey.output)")
            #expect(noKey.output.contains("tls: a key is needed (tls.key or --tls-key)"), "\(noKey.output)")
            let webWithoutCertificate = try await runPagerTestProcess(bin, [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path, "--web-tls-listen", "127.0.0.1:0",
            ], in: workspace)
            #expect(webWithoutCertificate.status == 78, "\(webWithoutCertificate.output)")
            #expect(webWithoutCertificate.output.contains(
                "--web-tls-listen needs a TLS certificate: give --tls-cert and --tls-key (or tls: in the config)"), "\(webWithoutCertificate.output)")
            #expect(webWithoutCertificate.output.split(separator: "\n").count == 1, "\(webWithoutCertificate.output)")
        }
    }

    @Test("AUTH off loopback needs TLS unless allowed")
    func authNeedsTLSOffLoopback() async throws {
        guard let address = nonLoopbackAddress() else {
            print("TLSTests: no non-loopback IPv4 address on this machine; only loopback AUTH checked")
            return
        }
        let certs = try TestCertificates()
        defer { certs.remove() }
        let auth = { (port: UInt16, workspace: Workspace) in
            try await sh("printf 'AUTH sesame\\n' | nc -q1 -s \(address) 127.0.0.1 \(port)", in: workspace).output
        }
        try await withDaemon(Self.fivePages, arguments: ["--token", "sesame"] + Self.tlsArguments(certs)) { daemon, workspace in
            let refused = try await auth(daemon.port, workspace)
            #expect(refused.contains("ERR 403 AUTH needs TLS on this address"), "\(refused)")
            let (local, _) = try await daemon.join()
            _ = try await local.ok("AUTH sesame")
            local.close()
            let port = try await tlsPort(daemon)
            let overTLS = try await sh(
                "printf 'AUTH sesame\\nQUIT\\n' | openssl s_client -quiet -CAfile \(shellQuoted(certs.caFile)) -connect 127.0.0.1:\(port) 2>/dev/null",
                in: workspace)
            #expect(overTLS.output.contains("OK AUTH control=yes"), "\(overTLS.output)")
        }
        try await withDaemon(Self.fivePages, arguments: ["--token", "sesame", "--allow-plaintext-auth"]) { daemon, workspace in
            let allowed = try await auth(daemon.port, workspace)
            #expect(allowed.contains("OK AUTH control=yes"), "\(allowed)")
        }
    }

    @Test("the pager over TLS prints the page; a wrong CA and a wrong host name are refused in one line")
    func pagerVerifiesTheServer() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: Self.tlsArguments(certs, listen: "0.0.0.0:0")) { daemon, workspace in
            let port = try await tlsPort(daemon)
            let pager = try Binaries.path(of: "pagesync")
            let good = try await runPagerTestProcess(pager, ["tls://127.0.0.1:\(port)", "--tls-ca", certs.caFile], in: workspace)
            #expect(good.status == 0, "\(good.output)")
            #expect(good.output.contains("this is page 1"), "\(good.output)")

            let byName = try await runPagerTestProcess(pager, ["localhost:\(port)", "--tls", "--tls-ca", certs.caFile], in: workspace)
            #expect(byName.output.contains("this is page 1"), "\(byName.output)")

            let unknownCA = try await runPagerTestProcess(pager, ["tls://127.0.0.1:\(port)", "--tls-ca", certs.otherCAFile], in: workspace)
            #expect(unknownCA.status != 0)
            #expect(unknownCA.output.contains("certificate is signed by an unknown CA"), "\(unknownCA.output)")
            #expect(unknownCA.output.split(separator: "\n").count == 1, "\(unknownCA.output)")

            // 127.0.0.2 is this machine too, but not a name in the certificate.
            let wrongHost = try await runPagerTestProcess(pager, ["tls://127.0.0.2:\(port)", "--tls-ca", certs.caFile], in: workspace)
            #expect(wrongHost.status != 0)
            #expect(wrongHost.output.contains("certificate is not for 127.0.0.2 (wrong host name)"), "\(wrongHost.output)")

            let insecure = try await runPagerTestProcess(pager, ["tls://127.0.0.2:\(port)", "--tls-insecure"], in: workspace)
            #expect(insecure.output.contains("WARNING: --tls-insecure"), "\(insecure.output)")
            #expect(insecure.output.contains("this is page 1"), "\(insecure.output)")

            let plaintextPager = try await runPagerTestProcess(pager, ["127.0.0.1:\(daemon.port)"], in: workspace)
            #expect(plaintextPager.output.contains("this is page 1"), "\(plaintextPager.output)")
        }
    }
}
