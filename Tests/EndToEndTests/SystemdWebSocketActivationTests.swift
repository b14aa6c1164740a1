import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The follower page under socket activation (pagesyncd-web.socket).
extension SystemdDaemonTests {
    /// pagesyncd-web.socket's hand-over: two sockets, named `pagesync` and `pagesync-web` as the
    /// shipped units name them; the daemon speaks the line protocol on the first and serves the
    /// follower page (HTTP, the WebSocket upgrade) on the second, and binds neither configured address.
    @Test func socketActivationServesTheFollowerPageOnThePagesyncWebSocket() throws {
        guard let activate = SystemdE2E.which("systemd-socket-activate") else {
            cannotRunHere(skipped: "systemd-socket-activate is not installed", underCI: "systemd-socket-activate is not installed (scripts/test installs systemd)")
            return
        }
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        let directory = try SystemdE2E.temporaryDirectory("activate-web-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = try SystemdE2E.writeDocument(in: directory)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let plainPort = try SystemdE2E.freePort()
        let webPort = try SystemdE2E.freePort()
        let configuredPlain = try SystemdE2E.freePort()
        let configuredWeb = try SystemdE2E.freePort()
        let process = try SystemdE2E.socketActivate(activate, ["-l", "127.0.0.1:\(plainPort)", "-l", "127.0.0.1:\(webPort)", "--fdname=pagesync:pagesync-web",
                             binary, "--listen", "127.0.0.1:\(configuredPlain)", "--web-listen", "127.0.0.1:\(configuredWeb)",
                             "--state-dir", state.path, document.path])
        defer { process.killAndReap() }

        // The first connection (the line protocol) starts the daemon with both sockets.
        let plain = try #require(SystemdE2E.connect(port: plainPort), "systemd-socket-activate did not listen")
        defer { close(plain) }
        #expect(SystemdE2E.readLine(plain)?.hasPrefix("HELLO pagesync/1 ") == true)

        // The follower page on the pagesync-web socket.
        let web = try #require(SystemdE2E.connect(port: webPort, retryFor: 0))
        defer { close(web) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(web, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".withCString { send(web, $0, strlen($0), 0) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(web, &chunk, chunk.count, 0)
            if n <= 0 { break }
            answer += chunk[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 "), "the pagesync-web socket: \(text.prefix(200))")
        #expect(text.contains("Content-Security-Policy: "), "the follower page's answer")
        // The line protocol is not served there: a protocol line is no HTTP request.
        let wrong = try #require(SystemdE2E.connect(port: webPort, retryFor: 0))
        defer { close(wrong) }
        setsockopt(wrong, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = "PING\r\n\r\n".withCString { send(wrong, $0, strlen($0), 0) }
        let refusal = SystemdE2E.readLine(wrong) ?? ""
        #expect(refusal.hasPrefix("HTTP/1.1 400"), "the pagesync-web socket answered a protocol line with \(refusal)")
        #expect(SystemdE2E.connect(port: configuredPlain, retryFor: 0) == nil, "the activated daemon also bound --listen")
        #expect(SystemdE2E.connect(port: configuredWeb, retryFor: 0) == nil, "the activated daemon also bound --web-listen")

        process.send(signal: SIGTERM)
        #expect(Self.waitForExit(process, seconds: 5) != nil)
    }
}
