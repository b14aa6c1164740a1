import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The TLS web listener's port, from the daemon's `follower page on https://127.0.0.1:<port>/` line.
func webTLSPort(_ daemon: Daemon) async throws -> UInt16 {
    let pattern = /follower page on https:\/\/127\.0\.0\.1:(\d+)\//
    for _ in 0..<250 {
        if let match = daemon.stderr.firstMatch(of: pattern), let port = UInt16(match.1) { return port }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw HarnessError("pagesyncd did not log `follower page on https://...`; stderr:\n\(daemon.stderr)")
}

/// An independent client of `--web-tls-listen`: Python's ssl module and websocket-client, each
/// verifying the server's certificate with the test CA. One `key: value` line per check.
/// Arguments: TLS web port, TCP port, CA file, plain web port.
private let checkScript = #"""
    import socket, ssl, subprocess, sys, time, urllib.request
    import websocket

    host, web, tcp, ca, plain = "127.0.0.1", int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])

    def report(key, value):
        print(f"{key}: {value}", flush=True)

    # The follower page over https, the certificate verified.
    context = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(f"https://{host}:{web}/", context=context, timeout=5) as response:
        body = response.read().decode()
        report("page_status", response.status)
        report("page_csp", response.headers.get("Content-Security-Policy", "-"))
        report("page_html", "<title>pagesync</title>" in body)
    # The plain listener serves the same page meanwhile.
    with urllib.request.urlopen(f"http://{host}:{plain}/", timeout=5) as response:
        report("plain_page", f"{response.status} {'<title>pagesync</title>' in response.read().decode()}")

    # The WebSocket over wss: greeting, a command, and a page turned by a plain TCP client.
    ws = websocket.create_connection(f"wss://{host}:{web}/ws?room=deck", timeout=5, sslopt={"ca_certs": ca})
    report("hello", ws.recv())
    ws.send("NEXT")
    report("next", ws.recv())
    subprocess.run(["nc", "-q1", host, str(tcp)], input=b"next\n", capture_output=True, timeout=10)
    # (Its own turn's PAGE comes first.)
    pages = [ws.recv()]
    while len(pages) < 5 and " page=3 " not in pages[-1]:
        pages.append(ws.recv())
    report("page", pages[-1])
    ws.close()

    # Plain HTTP to the TLS port: no answer in clear text, and the connection is closed.
    s = socket.create_connection((host, web), timeout=10)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    data, closed = b"", False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            data += chunk
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        pass
    report("plaintext", f"closed={closed} http={b'HTTP/' in data}")

    # A client that connects and never speaks TLS: closed within the handshake timeout.
    s = socket.create_connection((host, web), timeout=10)
    started = time.monotonic()
    try:
        closed = s.recv(1) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    report("silent", f"closed={closed} after={time.monotonic() - started:.1f}")
    """#

/// `--web-tls-listen`: what `--web-listen` serves, over TLS (https://, wss://).
@Suite("WebSocket over TLS", .timeLimit(.minutes(2)))
struct WebSocketTLSTests {
    @Test("the follower page over https and its WebSocket over wss, beside the plain web and TLS line listeners")
    func pageAndWebSocketOverTLS() async throws {
        guard let python = WebSocketTests.python() else {
            cannotRunHere(skipped: "python3-websocket is not installed; wss:// not checked",
                          underCI: "python3-websocket is not installed (scripts/test installs it)")
            return
        }
        let certs = try TestCertificates()
        defer { certs.remove() }
        let arguments = TLSTests.tlsArguments(certs) + [
            "--web-tls-listen", "127.0.0.1:0", "--web-listen", "127.0.0.1:0", "--tls-handshake-timeout", "1",
        ]
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: arguments) { daemon, workspace in
            let port = try await webTLSPort(daemon)
            let plain = try await webPort(daemon)
            #expect(daemon.stderr.contains("follower page on https://127.0.0.1:\(port)/, WebSocket on wss://127.0.0.1:\(port)/ws"))
            try workspace.write("check.py", checkScript)
            let run = try await runProcess(python, [workspace.url("check.py").path, String(port), String(daemon.port), certs.caFile, String(plain)],
                                           timeout: .seconds(60))
            #expect(run.status == 0, "check.py: exit \(run.status)\n\(run.output)")
            let result = scriptResults(run.output)
            #expect(result["page_status"] == "200", "\(run.output)")
            #expect(result["page_csp"]?.hasPrefix("default-src 'self';") == true, "\(run.output)")
            #expect(result["page_html"] == "True")
            #expect(result["plain_page"] == "200 True")
            #expect(result["hello"]?.hasPrefix("HELLO pagesync/1 room=deck page=1 pages=3 ") == true, "\(run.output)")
            #expect(result["next"]?.hasPrefix("OK page=2 ") == true, "\(run.output)")
            #expect(result["page"]?.hasPrefix("PAGE room=deck page=3 pages=3 ") == true, "nc's turn reached the wss member: \(run.output)")
            #expect(result["plaintext"] == "closed=True http=False", "\(run.output)")
            let silent = try #require(result["silent"], "\(run.output)")
            #expect(silent.hasPrefix("closed=True "), "\(silent)")
            let after = Double(silent.split(separator: "=").last ?? "") ?? 99
            #expect(after >= 0.5 && after < 4, "closed by --tls-handshake-timeout 1, not the 5 s head timeout: \(silent)")
            // The line protocol's TLS listener is served alongside.
            let (client, _) = try await TLSLineClient.join(port: try await tlsPort(daemon), caFile: certs.caFile, in: workspace, label: "tls")
            defer { client.close() }
            #expect(try await client.client.ok("STATUS").page == 3)
        }
    }

    @Test("--web-tls-listen alone: SIGHUP's new certificate is the one new https connections get")
    func certificateRotationReachesTheWebListener() async throws {
        let certs = try TestCertificates()
        defer { certs.remove() }
        let arguments = ["--web-tls-listen", "127.0.0.1:0", "--tls-cert", certs.certificateFile, "--tls-key", certs.keyFile]
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: arguments) { daemon, workspace in
            let port = try await webTLSPort(daemon)
            #expect(!daemon.stderr.contains("listening for TLS"), "no line-protocol TLS listener was asked for")
            #expect(try await TLSOperationsTests.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = server")
            try certs.rotateServer(to: "rotated")
            daemon.send(signal: SIGHUP)
            try await TLSOperationsTests.waitForLog(daemon, "reload: TLS certificate \(certs.certificateFile) loaded")
            #expect(try await TLSOperationsTests.presentedSubject(port: port, caFile: certs.caFile, in: workspace) == "subject=CN = rotated")
        }
    }
}
