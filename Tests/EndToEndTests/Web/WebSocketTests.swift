import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The web listener's port, from the daemon's `follower page on http://127.0.0.1:<port>/` line.
func webPort(_ daemon: Daemon) async throws -> UInt16 {
    let pattern = /follower page on http:\/\/127\.0\.0\.1:(\d+)\//
    for _ in 0..<250 {
        if let match = daemon.stderr.firstMatch(of: pattern), let port = UInt16(match.1) { return port }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw HarnessError("pagesyncd did not log `follower page on http://...`; stderr:\n\(daemon.stderr)")
}

/// The `key: value` lines a check script printed, by key (other lines are left out).
func scriptResults(_ output: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in output.split(separator: "\n") {
        guard let separator = line.range(of: ": ") else { continue }
        result[String(line[..<separator.lowerBound])] = String(line[separator.upperBound...])
    }
    return result
}

/// `--web-listen`'s WebSocket, driven by an independent client (Python's websocket-client and
/// raw frames): framing, control frames, the close handshake, every bad frame's close code, the
/// handshake's refusals, and a browser member as a member like any other.
@Suite("WebSocket", .timeLimit(.minutes(2)))
struct WebSocketTests {
    /// Debian's python3 with python3-websocket (scripts/test installs it); nil when missing.
    static func python() -> String? {
        let python = "/usr/bin/python3"
        guard access(python, X_OK) == 0 else { return nil }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import websocket"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return nil }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? python : nil
    }

    @Test func anIndependentClientSpeaksTheProtocolAndEachBadFrameGetsItsClose() async throws {
        guard let python = Self.python() else {
            cannotRunHere(skipped: "python3-websocket is not installed; WebSocket protocol not checked",
                          underCI: "python3-websocket is not installed (scripts/test installs it)")
            return
        }
        try await withWorkspace { workspace in
            try workspace.write("deck.txt", Documents.formFeed(pages: 3))
            // Another site's page allowed by the config file (web-origins).
            try workspace.write("origins.yaml", "web-origins: [\"http://app.example:8000\"]\n")
            let daemon = try await workspace.startDaemon(documents: ["deck.txt"], arguments: [
                "--config", workspace.url("origins.yaml").path, "--web-listen", "127.0.0.1:0", "--max-line", "100"])
            let port = try await webPort(daemon)
            try workspace.write("check.py", WebSocketProtocolScript.source)
            let run = try await runProcess(python, [workspace.url("check.py").path, String(port), String(daemon.port)], timeout: .seconds(60))
            #expect(run.status == 0, "check.py: exit \(run.status)\n\(run.output)")
            let result = scriptResults(run.output)
            let hello = try #require(result["hello"], "no greeting:\n\(run.output)")
            #expect(hello.hasPrefix("HELLO pagesync/1 room=deck page=1 pages=3 version=0 "))
            #expect(result["pong"] == "10 pong?", "a ping between a message's fragments gets its pong")
            #expect(result["text"]?.hasPrefix("OK TEXT page=2 pages=3 ") == true, "the fragments make one command: \(result["text"] ?? "-")")
            #expect(result["text"]?.contains("this is page 2") == true && result["text"]?.hasSuffix(" | .") == true)
            #expect(result["name"] == "OK NAME webby")
            #expect(result["who"] == "OK WHO 1 | webby control=yes view=follow hand=down you=yes | .", "a browser member appears in WHO")
            #expect(result["page"]?.hasPrefix("PAGE room=deck page=2 pages=3 version=1 by=guest-") == true, "nc's turn reached the socket")
            #expect(result["close"] == "8 1000", "the close handshake: the same code back")
            #expect(result["quit"] == "OK BYE -> 8 1000")
            #expect(result["unmasked"] == "HTTP/1.1 101 Switching Protocols -> close 1002")
            #expect(result["oversized"] == "HTTP/1.1 101 Switching Protocols -> close 1009", "over --max-line 100")
            #expect(result["invalid_utf8"] == "HTTP/1.1 101 Switching Protocols -> close 1007")
            #expect(result["binary"] == "HTTP/1.1 101 Switching Protocols -> close 1003")
            #expect(result["line_break"] == "HTTP/1.1 101 Switching Protocols -> close 1007")
            #expect(result["unknown_room"] == "ERR 404 no room \"nope\" -> close 1000")
            #expect(result["foreign_origin"] == "HTTP/1.1 403 Forbidden")
            #expect(result["same_origin"] == "HTTP/1.1 101 Switching Protocols")
            #expect(result["listed_origin"] == "HTTP/1.1 101 Switching Protocols", "an origin listed in web-origins")
            #expect(result["old_version"] == "HTTP/1.1 426 Upgrade Required")
            #expect(result["no_key"] == "HTTP/1.1 400 Bad Request")
            #expect(result["rebound"] == "HTTP/1.1 421 Misdirected Request", "DNS rebinding: another name for this loopback listener")
            #expect(result["stalled"] == "HTTP/1.1 101 Switching Protocols True True",
                    "a WebSocket that read nothing during 5,000 turns got fewer than 1,000 PAGE lines, the last the room's latest")
            #expect(result["flood"] == "HTTP/1.1 101 Switching Protocols OK PONG True 1500 True",
                    "1,500 PINGs at once over a WebSocket: the TCP member's PING answered while they waited, then every one, in order")
            #expect(Int(result["web_rate_waits"] ?? "") ?? 0 > 0, "INFO stats counts the flood's waits: \(result["web_rate_waits"] ?? "-")")
            #expect(result["render"] == #"200 3 '<pre>this is page 3\n</pre>'"#, "page 3 as HTML, for the follower page")
            #expect(result["render_past_end"] == "404 no page 9: this document has 3 pages")
            #expect(result["render_unknown_room"] == "404 no room named nope")
            // TCP members were served meanwhile.
            let (client, _) = try await daemon.join()
            _ = try await client.ok("FIRST")
        }
    }
}
