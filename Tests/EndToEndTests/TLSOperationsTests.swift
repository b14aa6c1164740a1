import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// TLS in operation: TLS and plaintext clients sharing rooms, certificate rotation, the handshake
/// timeout, the pager over TLS in a terminal, many idle TLS clients. Real certificates made by the
/// `openssl` CLI, the real daemon, `openssl s_client` as the TLS client.
@Suite("TLS in operation", .timeLimit(.minutes(3)))
struct TLSOperationsTests {
    static let fivePages = ["doc.txt": Documents.formFeed(pages: 5)] as KeyValuePairs

    /// The subject of the certificate a new connection to `port` is shown (`subject=CN = ...`).
    static func presentedSubject(port: UInt16, caFile: String, in workspace: Workspace) async throws -> String {
        let result = try await runPagerTestProcess("/bin/sh", ["-c",
            "openssl s_client -verify_return_error -CAfile \(shellQuoted(caFile)) -connect 127.0.0.1:\(port) </dev/null 2>/dev/null"
            + " | openssl x509 -noout -subject"], in: workspace)
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until the daemon's log contains `text` (a guard, not a timing assertion).
    static func waitForLog(_ daemon: Daemon, _ text: String) async throws {
        for _ in 0..<1500 {
            if daemon.stderr.contains(text) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("pagesyncd never logged \"\(text)\"; stderr:\n\(daemon.stderr)")
    }

    @Test("TLS and plaintext clients in one room: a change on either side reaches the other")
    func tlsAndPlaintextShareARoom() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            let (tls, tlsHello) = try await TLSLineClient.join(port: port, caFile: certs.caFile, in: workspace, label: "tls")
            defer { tls.close() }
            let (plain, plainHello) = try await daemon.join(label: "plain")
            defer { plain.close() }
            #expect(tlsHello["room"] == "doc" && plainHello["room"] == "doc", "\(tlsHello) \(plainHello)")

            // TLS side moves; the plaintext side sees the event.
            #expect(try await tls.client.ok("NEXT").page == 2)
            let seen = try await plain.pageEvent(2)
            #expect(seen.page == 2 && seen["room"] == "doc", "\(seen)")

            // Plaintext side moves; the TLS side sees the event.
            #expect(try await plain.ok("GOTO 4").page == 4)
            let seenOverTLS = try await tls.client.pageEvent(4)
            #expect(seenOverTLS.page == 4, "\(seenOverTLS)")

            let status = try await tls.client.ok("STATUS")
            #expect(status["clients"] == "2" && status.page == 4, "\(status)")
        }
    }

    @Test("SIGHUP rotates the certificate: old TLS connections stay, new ones get the new certificate; a bad one keeps the old")
    func certificateRotation() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            #expect(try await Self.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = server")
            let (old, _) = try await TLSLineClient.join(port: port, caFile: certs.caFile, in: workspace, label: "old")
            defer { old.close() }

            // Rotate: a new certificate and key at the same paths, then SIGHUP.
            try certs.rotateServer(to: "rotated")
            daemon.send(signal: SIGHUP)
            try await Self.waitForLog(daemon, "reload: TLS certificate \(certs.certificateFile) loaded")

            #expect(try await Self.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = rotated")
            // The connection made before the rotation still works, both ways.
            #expect(try await old.client.ok("NEXT").page == 2)
            let (plain, _) = try await daemon.join()
            defer { plain.close() }
            #expect(try await plain.ok("NEXT").page == 3)
            #expect(try await old.client.pageEvent(3).page == 3)

            // A certificate that does not load: logged in one line, the rotated one kept.
            try "this is not a certificate\n".write(toFile: certs.certificateFile, atomically: true, encoding: .utf8)
            daemon.send(signal: SIGHUP)
            try await Self.waitForLog(daemon, "; keeping the previous certificate")
            let line = daemon.stderr.split(separator: "\n").first { $0.contains("keeping the previous certificate") } ?? ""
            #expect(line.contains("reload: TLS: cannot use certificate \(certs.certificateFile)"), "\(line)")
            #expect(daemon.isRunning)
            #expect(try await Self.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = rotated")
            #expect(try await old.client.ok("PREV").page == 2)
            let (late, _) = try await TLSLineClient.join(port: port, caFile: certs.caFile, in: workspace, label: "late")
            defer { late.close() }
            #expect(try await late.client.ok("STATUS").page == 2)
        }
    }

    @Test("a TLS connection that never completes its handshake is closed after --tls-handshake-timeout")
    func handshakeTimeout() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs) + ["--tls-handshake-timeout", "3"]) { daemon, workspace in
            let port = try await tlsPort(daemon)
            // A TCP connection that sends nothing: no handshake ever starts.
            let silent = try await LineClient.connect(port: port, label: "silent")
            defer { silent.close() }
            try await silent.expectClosed()
            try await Self.waitForLog(daemon, "no TLS handshake within 3 s")
            // A real TLS client in the same daemon is not affected, however long it stays.
            let (tls, _) = try await TLSLineClient.join(port: port, caFile: certs.caFile, in: workspace, label: "tls")
            defer { tls.close() }
            // (3 s, not 1: on a loaded machine starting the openssl filter process and its handshake
            // can take over a second.)
            try await Task.sleep(for: .milliseconds(3500))
            #expect(try await tls.client.ok("PING").kind == "OK")
        }
    }

    @Test("refused for max-clients or max-clients-per-address: a TLS client reads ERR 503, a socket that never speaks TLS is closed after the handshake timeout")
    func refusedTLSConnectionsAreBounded() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        for limit in [["--max-clients", "1"], ["--max-clients-per-address", "1"]] {
            let arguments = TLSTests.tlsArguments(certs) + limit + ["--tls-handshake-timeout", "1"]
            try await withDaemon(Self.fivePages, arguments: arguments) { daemon, workspace in
                let port = try await tlsPort(daemon)
                let (first, _) = try await TLSLineClient.join(port: port, caFile: certs.caFile, in: workspace, label: "first")
                defer { first.close() }
                // The refusal must be readable over TLS before the close.
                let second = try TLSLineClient(port: port, caFile: certs.caFile, in: workspace, label: "second")
                defer { second.close() }
                let refusal = try await second.client.readLine()
                #expect(refusal.hasPrefix("ERR 503 "), "\(limit): \(refusal); \(second.errors)")
                // Refused, and never a handshake: closed like any connection that does not
                // complete one, not held until the peer goes (each would keep a descriptor).
                let silent = try await LineClient.connect(port: port, label: "silent")
                defer { silent.close() }
                try await silent.expectClosed()
                #expect(try await first.client.ok("PING").kind == "OK")
            }
        }
    }

    @Test("SIGHUP with an expired certificate keeps the previous one; starting with one warns")
    func expiredCertificate() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let expired = try certs.makeLeaf("expired", days: -1)
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            try FileManager.default.removeItem(atPath: certs.certificateFile)
            try FileManager.default.copyItem(atPath: expired.cert, toPath: certs.certificateFile)
            try FileManager.default.removeItem(atPath: certs.keyFile)
            try FileManager.default.copyItem(atPath: expired.key, toPath: certs.keyFile)
            daemon.send(signal: SIGHUP)
            try await Self.waitForLog(daemon, "reloaded: ")
            let line = daemon.stderr.split(separator: "\n").first { $0.contains("reload: TLS") } ?? ""
            #expect(line.contains("error") && line.contains("reload: TLS: certificate \(certs.certificateFile) has expired (")
                        && line.hasSuffix("; keeping the previous certificate"), "\(line)")
            // New connections still get the valid certificate.
            #expect(try await Self.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = server")
        }
        // At start there is no previous one: it is served (plaintext clients are not kept
        // waiting for a certificate), with a warning.
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, _ in
            _ = try await tlsPort(daemon)
            #expect(daemon.stderr.contains("warning pagesyncd: TLS: certificate \(certs.certificateFile) has expired ("), "\(daemon.stderr)")
        }
    }

    @Test("--tls-handshake-timeout out of range is refused in one line")
    func handshakeTimeoutValidated() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withWorkspace { workspace in
            let result = try await runPagerTestProcess(try Binaries.pagesyncd(), [
                "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
            ] + TLSTests.tlsArguments(certs) + ["--tls-handshake-timeout", "0"], in: workspace)
            #expect(result.status == 78, "\(result.output)")
            #expect(result.output.contains("tls: handshake-timeout must be between 1 and 3600 seconds, not 0"), "\(result.output)")
        }
    }

    @Test("the pager over TLS in a terminal follows the room and turns its pages")
    func pagerInTmuxOverTLS() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("tls")
                let command = [try Binaries.path(of: "pagesync"), "tls://127.0.0.1:\(port)", "--tls-ca", certs.caFile, "--name", "tess"]
                    .map(shellQuoted).joined(separator: " ")
                try await tmux.type("tls", command, enter: true)
                try await tmux.waitFor("tls", showing: "this is page 1", "page 1/5")

                // A plaintext client moves the room; the TLS pager follows.
                let (plain, _) = try await daemon.join(label: "plain")
                defer { plain.close() }
                #expect(try await plain.ok("GOTO 3").page == 3)
                try await tmux.waitFor("tls", showing: "this is page 3", "page 3/5")

                // The TLS pager turns the page; the plaintext client sees who did it.
                try await tmux.type("tls", "]")
                let event = try await plain.pageEvent(4)
                #expect(event.page == 4 && event["by"] == "tess", "\(event)")
                try await tmux.waitFor("tls", showing: "this is page 4", "page 4/5")
                try await tmux.type("tls", "q")
                _ = try await tmux.waitFor("tls", "the shell prompt after q") { $0.contains("$") && !$0.contains("page 4/5") }
            }
        }
    }

    @Test("the pager with --tls-insecure in a terminal says so on its status line the whole time")
    func insecurePagerSaysSoInTheTerminal() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withDaemon(Self.fivePages, arguments: TLSTests.tlsArguments(certs)) { daemon, workspace in
            let port = try await tlsPort(daemon)
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("insecure")
                let command = [try Binaries.path(of: "pagesync"), "tls://127.0.0.1:\(port)", "--tls-insecure"]
                    .map(shellQuoted).joined(separator: " ")
                try await tmux.type("insecure", command, enter: true)
                // The warning printed before the alternate screen is not on it.
                try await tmux.waitFor("insecure", showing: "this is page 1", "page 1/5")
                #expect(try await tmux.statusLine("insecure").hasPrefix("TLS NOT VERIFIED · "))
                // Keys clear messages; this stays.
                try await tmux.press("insecure", "Space")
                try await tmux.waitFor("insecure", showing: "this is page 2", "page 2/5")
                #expect(try await tmux.statusLine("insecure").hasPrefix("TLS NOT VERIFIED · "))
                try await tmux.type("insecure", "q")
                _ = try await tmux.waitFor("insecure", "the warning on the shell's screen after q") {
                    $0.contains("WARNING: --tls-insecure") && !$0.contains("page 2/5")
                }
            }
        }
    }

    @Test("1,000 idle TLS clients are held, and every one answers a PING afterwards")
    func thousandIdleTLSClients() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let arguments = TLSTests.tlsArguments(certs) + ["--max-clients", "2000", "--max-clients-per-address", "2000"]
        try await withDaemon(Self.fivePages, arguments: arguments) { daemon, workspace in
            let port = try await tlsPort(daemon)
            // pagesync-bench holds the clients: TLS connections that verify the server, on two
            // worker processes' libuv loops; its driver uses the plaintext port.
            let bench = try await runPagerTestProcess(try Binaries.path(of: "pagesync-bench"), [
                "run", "--target", "pagesyncd", "--port", "\(port)", "--driver-port", "\(daemon.port)",
                "--tls-ca", certs.caFile, "--server-pid", "\(daemon.pid)", "--label", "tls",
                "--tests", "idle", "--followers", "1000", "--settle-ms", "500", "--ping-timeout-ms", "60000",
            ], in: workspace, timeout: .seconds(150))
            #expect(bench.status == 0, "\(bench.output)")
            let rows: [[String]] = bench.output.split(separator: "\n").map { line in
                line.split(separator: "\t").map(String.init)
            }
            func row(_ metric: String) -> Double? {
                for fields in rows where fields.count == 4 && fields[0] == "tls" && fields[1] == metric {
                    return Double(fields[3])
                }
                return nil
            }
            #expect(row("idle_ready") == 1000, "\(bench.output)")
            #expect(row("idle_pongs") == 1000, "\(bench.output)")
            #expect(row("idle_open_errors") == nil, "\(bench.output)")
            #expect(daemon.isRunning)
            if let perClient = row("idle_mem_per_conn_bytes") {
                print("1,000 idle TLS clients: \(Int(perClient)) bytes of daemon RSS per client (a figure, not a check)")
            }
        }
    }
}

extension LineClient {
    /// Reads lines until the `PAGE` event for `page` (a client gets events for its own changes
    /// too, so earlier ones are skipped); the read timeout guards against it never coming.
    fileprivate func pageEvent(_ page: Int) async throws -> ServerLine {
        while true {
            let line = try await readServerLine()
            if line.kind == "PAGE" && line.page == page { return line }
        }
    }
}
