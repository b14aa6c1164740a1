import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The pager as a reader of long pages and long lines, and what it keeps on its status line:
/// real `pagesyncd` and `pagesync` binaries in tmux terminals (see ``PagerTmux``).
@Suite("Pager as a reader (tmux)", .timeLimit(.minutes(5)))
struct PagerReaderTests {
    /// The VmRSS (or another `Vm…` field) of process `pid`, in KiB.
    func memoryKiB(_ pid: Int32, _ field: String = "VmRSS") throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kib = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else {
            throw HarnessError("no \(field) in /proc/\(pid)/status")
        }
        return kib
    }

    @Test("a 100 MB single-page document: > reads to the end, the last line shows, < goes back; pager RSS under 64 MiB")
    func hundredMegabytePage() async throws {
        try await withWorkspace { workspace in
            let path = workspace.root.path + "/big.txt"
            let lines = 1_800_000
            let made = try await runPagerTestProcess(
                "/bin/sh", ["-c", "seq -f 'line %.0f of a page of a hundred megabytes without form feeds' 1 \(lines) > \(path)"],
                in: workspace, timeout: .seconds(120))
            #expect(made.status == 0, "\(made.output)")
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size >= 100_000_000, "the document is \(size) bytes")
            let daemon = try await workspace.startDaemon(documents: ["big.txt"])
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                // exec: the pane's process is the pager itself, so its pid is tmux's pane_pid.
                try await tmux.type("t", "exec " + (try pagerCommand(daemon)), enter: true)
                try await tmux.waitFor("t", showing: "line 1 of a page", "lines 1-23/?", "more↓")
                let pidText = try await tmux.tmux(["display-message", "-p", "-t", "t", "#{pane_pid}"])
                let pid = try #require(Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))

                try await tmux.type("t", ">")
                let end = try await tmux.waitFor("t", "the last line", timeout: .seconds(240)) {
                    $0.contains("line \(lines) of a page") && $0.contains("/\(lines) 100% end")
                }
                #expect(end.contains("lines \(lines - 22)-\(lines)/\(lines)"), "\(end)")
                let rss = try memoryKiB(pid)
                let peak = try memoryKiB(pid, "VmHWM")
                // (Not under a sanitizer: its shadow memory counts in RSS.)
                if Daemon.resourceBudgetsApply { #expect(rss < 64 * 1024, "pager VmRSS \(rss) KiB (peak \(peak) KiB)") }
                print("100 MB page: pager VmRSS \(rss) KiB, VmHWM \(peak) KiB")

                // Up from the end reads back through the pieces the index knows.
                try await tmux.press("t", "b")
                try await tmux.waitFor("t", showing: "line \(lines - 23) of a page", "lines \(lines - 45)-\(lines - 23)/\(lines)")
                try await tmux.type("t", "<")
                try await tmux.waitFor("t", "the first line again") {
                    $0.contains("line 1 of a page") && $0.contains("lines 1-23/\(lines)")
                }
                if Daemon.resourceBudgetsApply { #expect(try memoryKiB(pid) < 64 * 1024) }
            }
        }
    }

    @Test("chopped long lines: w marks them with >, → and ← scroll sideways with < at the left")
    func horizontalScroll() async throws {
        let wide = (0..<20).map { "col\($0 * 10)".padding(toLength: 10, withPad: ".", startingAt: 0) }.joined()
        let page = "short line\n" + wide + "\n"
        try await withDaemon(["wide.txt": page]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 100, rows: 8)
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                try await tmux.waitFor("t", showing: "short line", "col0")
                try await tmux.press("t", "Right")
                try await tmux.waitFor("t", showing: "w chops them")
                try await tmux.type("t", "w")
                let chopped = try await tmux.waitFor("t", showing: "long lines are chopped")
                let rows = chopped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                #expect(rows.contains { $0.hasPrefix("col0......col10") && $0.hasSuffix(">") && $0.count == 100 }, "\(chopped)")
                #expect(rows.contains("short line"), "a line that fits has no marker: \(chopped)")
                #expect(!chopped.contains("col100"), "\(chopped)")

                try await tmux.press("t", "Right", "Right", "Right", "Right", "Right")  // 5 x 8 columns
                let right = try await tmux.waitFor("t", showing: "from column 41")
                let rightRows = right.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                #expect(rightRows.contains { $0.hasPrefix("<col40") && $0.hasSuffix(">") }, "\(right)")
                #expect(rightRows.contains("<"), "a short line scrolled out of view keeps its mark: \(right)")
                #expect(!right.contains("short line"), "\(right)")

                try await tmux.press("t", "Left", "Left", "Left", "Left", "Left")
                try await tmux.waitFor("t", showing: "back at the left edge", "short line", "col0......col10")
                try await tmux.press("t", "Left")
                try await tmux.waitFor("t", showing: "already at the left edge")
            }
        }
    }

    @Test("the server's BYE reason stays on the status line while reconnecting is refused")
    func farewellStaysWhileReconnecting() async throws {
        try await withWorkspace { workspace in
            try workspace.write("doc.txt", Documents.formFeed(pages: 3))
            let daemon = try await workspace.startDaemon(documents: ["doc.txt"])
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 120, rows: 10)
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                try await tmux.waitFor("t", showing: "this is page 1", "page 1/3")
                daemon.send(signal: SIGTERM)
                _ = try await daemon.waitForExit(timeout: .seconds(10))
                try await tmux.waitFor("t", showing: "reconnecting…", "server shutting down")
                // Several refused attempts later (100 ms, 200 ms, 400 ms, ...) the reason is still the server's.
                try await Task.sleep(for: .seconds(2))
                let status = try await tmux.statusLine("t")
                #expect(status.contains("server shutting down"), "\(status)")
                #expect(!status.contains("connection refused"), "\(status)")
            }
        }
    }

    @Test("small things: a count before Space scrolls that many lines; TERM=dumb shows no styles at all")
    func countBeforeSpaceAndDumbTerminal() async throws {
        let page = (1...40).map { "\u{1B}[1mline\u{1B}[0m \($0)" }.joined(separator: "\n") + "\n"
        try await withDaemon(["doc.txt": page]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 80, rows: 10)
                try await tmux.type("t", "env -u NO_COLOR " + (try pagerCommand(daemon)), enter: true)
                try await tmux.waitFor("t", showing: "line 1", "lines 1-9/40")
                #expect(try await tmux.screenWithEscapes("t").contains("\u{1B}[1mline"))
                try await tmux.type("t", "3")
                try await tmux.press("t", "Space")
                try await tmux.waitFor("t", showing: "lines 4-12/40")

                try await tmux.openTerminal("dumb", columns: 80, rows: 10)
                try await tmux.type("dumb", "env -u NO_COLOR TERM=dumb " + (try pagerCommand(daemon)), enter: true)
                try await tmux.waitFor("dumb", showing: "line 1", "lines 1-9/40")
                let plain = try await tmux.screenWithEscapes("dumb")
                #expect(!plain.contains("\u{1B}[1m") && !plain.contains("\u{1B}[7m"), "no bold, no reverse status line: \(plain)")
            }
        }
    }
}

extension PagerReaderTests {
    @Test("the built-in guide names the address the daemon really listens on, and the page key it shows turns the page")
    func guideShowsTheRealAddress() async throws {
        try await withWorkspace { workspace in
            let daemon = try await workspace.startDaemon(documents: [])
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 80, rows: 24)
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                let screen = try await tmux.waitFor("t", showing: "built-in guide", "nc -q1 127.0.0.1 \(daemon.port)")
                #expect(!screen.contains(" 7777") || daemon.port == 7777, "\(screen)")
                try await tmux.type("t", "]")
                try await tmux.waitFor("t", showing: "Turning pages", "page 2/")
            }
        }
    }
}

/// A one-connection server on 127.0.0.1 that writes `lines` as soon as a client connects and
/// keeps the connection open until the client closes it: a server that cannot send what the
/// real daemon sends, to see what the pager does with it.
final class ScriptedServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32

    init(lines: [String]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw HarnessError("bind/listen: \(String(cString: strerror(errno)))")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let text = Array(lines.map { $0 + "\n" }.joined().utf8)
        Thread.detachNewThread {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            _ = text.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(client, &buffer, buffer.count) > 0 {}
            close(client)
        }
    }

    deinit { close(listener) }
}

extension PagerReaderTests {
    @Test("pagesync > file from a server that cannot send the rest of a long page: stderr says the output is cut, status 1")
    func printingACutPageSaysSo() async throws {
        let server = try ScriptedServer(lines: [
            "HELLO pagesync/1 room=r page=1 pages=1 version=1 by=- doc=d1 epoch=e wrap=no control=yes name=guest-1",
            "OK TEXT page=1 pages=1 doc=d1 bytes=5000000 lines=2 truncated=yes",
            "first line",
            "second li",
            ".",
        ])
        try await withWorkspace { workspace in
            let out = workspace.root.path + "/printed.txt"
            let pagesync = try Binaries.path(of: "pagesync")
            let run = try await runPagerTestProcess("/bin/sh", ["-c", "\(shellQuoted(pagesync)) 127.0.0.1:\(server.port) > \(out)"],
                                                    in: workspace)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("is longer than the server sends") && run.output.contains("cut"), "\(run.output)")
        }
    }
}

extension PagerReaderTests {
    @Test("a pagesync pointed at a server that is not pagesync ends with one line: at once when it says something else, after the connect timeout when it says nothing")
    func notAPagesyncServer() async throws {
        let ssh = try ScriptedServer(lines: ["SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3"])
        let silent = try ScriptedServer(lines: [])
        try await withWorkspace { workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 120, rows: 24)
                let pagesync = shellQuoted(try Binaries.path(of: "pagesync"))
                try await tmux.type("t", "\(pagesync) 127.0.0.1:\(ssh.port); echo \"exit=$?\"", enter: true)
                // (The command line itself shows "exit=$?": wait for the status echoed.)
                var screen = try await tmux.waitFor("t", "the pager's end") { $0.contains("exit=0") || $0.contains("exit=1") }
                #expect(screen.contains("pagesync: cannot connect to 127.0.0.1:\(ssh.port): not a pagesync server (it said: SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3)"), "\(screen)")
                #expect(screen.contains("exit=1"), "\(screen)")
                try await tmux.openTerminal("u", columns: 120, rows: 24)
                try await tmux.type("u", "\(pagesync) 127.0.0.1:\(silent.port); echo \"exit=$?\"", enter: true)
                screen = try await tmux.waitFor("u", "the pager's end", timeout: PagerTmux.screenTimeout + .seconds(5)) {
                    $0.contains("exit=0") || $0.contains("exit=1")
                }
                #expect(screen.contains("pagesync: cannot connect to 127.0.0.1:\(silent.port): no greeting within 5 s: is it a pagesync server?"), "\(screen)")
                #expect(screen.contains("exit=1"), "\(screen)")
                let modes = try await tmux.terminalModes("u")
                #expect(!modes.alternateScreen && modes.cursorVisible)
            }
        }
    }
}
