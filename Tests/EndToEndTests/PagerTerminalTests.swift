import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
/// The terminal left as it was on every way out (q, Ctrl-C, Ctrl-Z, SIGTERM, a refused
/// connection), and the command line's tokens and names.
extension PagerTests {
    @Test("q leaves the terminal as it was: no alternate screen, the shell's text and cursor back")
    func quitRestoresTheTerminal() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                try await tmux.type("t", "echo before-the-pager", enter: true)
                try await tmux.waitFor("t", showing: "before-the-pager")
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                let paging = try await tmux.waitFor("t", showing: "this is page 1", "page 1/5")
                #expect(!paging.contains("before-the-pager"), "the pager is on the alternate screen")
                let inside = try await tmux.terminalModes("t")
                #expect(inside.alternateScreen && !inside.cursorVisible)

                try await tmux.press("t", "q")
                try await tmux.waitForShell("t")
                try await tmux.type("t", "echo after-status-$?", enter: true)
                let after = try await tmux.waitFor("t", showing: "after-status-0")
                #expect(after.contains("before-the-pager") && !after.contains("this is page 1"), "\(after)")
                let outside = try await tmux.terminalModes("t")
                #expect(!outside.alternateScreen && outside.cursorVisible)
            }
        }
    }

    @Test("Ctrl-C quits cleanly; Ctrl-Z restores the terminal and fg brings the pager back")
    func ctrlCAndCtrlZ() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                try await tmux.waitFor("t", showing: "this is page 1", "page 1/5")

                try await tmux.press("t", "C-z")
                try await tmux.waitFor("t", showing: "Stopped")
                let stopped = try await tmux.terminalModes("t")
                #expect(!stopped.alternateScreen && stopped.cursorVisible)

                // The room moves while the pager is stopped; fg shows where it is now.
                _ = try await runPagerTestProcess("/bin/sh", ["-c", "printf 'next\\n' | nc -q1 127.0.0.1 \(daemon.port)"], in: workspace)
                try await tmux.type("t", "fg", enter: true)
                try await tmux.waitFor("t", showing: "this is page 2", "page 2/5")
                let resumed = try await tmux.terminalModes("t")
                #expect(resumed.alternateScreen && !resumed.cursorVisible)
                try await tmux.press("t", "Space")
                try await tmux.waitFor("t", showing: "this is page 3")

                try await tmux.press("t", "C-c")
                try await tmux.waitForShell("t")
                try await tmux.type("t", "echo after-status-$?", enter: true)
                try await tmux.waitFor("t", showing: "after-status-0")
                let outside = try await tmux.terminalModes("t")
                #expect(!outside.alternateScreen && outside.cursorVisible)
            }
        }
    }

    @Test("SIGTERM and a refused connection also restore the terminal")
    func otherExitPathsRestoreTheTerminal() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                try await tmux.type("t", try pagerCommand(daemon) + "; echo after-status-$?", enter: true)
                try await tmux.waitFor("t", showing: "this is page 1", "page 1/5")
                let shell = try await tmux.tmux(["display-message", "-p", "-t", "t", "#{pane_pid}"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                // The pager is the only child of the shell in the pane.
                let children = try readProcFile("/proc/\(shell)/task/\(shell)/children")
                    .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                #expect(children.count == 1, "the shell's children: \(children)")
                for child in children { Glibc.kill(child, SIGTERM) }
                try await tmux.waitFor("t", showing: "after-status-143")
                var modes = try await tmux.terminalModes("t")
                #expect(!modes.alternateScreen && modes.cursorVisible)

                // A crash (here SIGABRT from outside) restores the terminal too, then dies of its signal.
                try await tmux.type("t", "clear; ulimit -c 0; " + (try pagerCommand(daemon)) + "; echo crash-status-$?", enter: true)
                try await tmux.waitFor("t", showing: "this is page 1", "page 1/5")
                let pager = try readProcFile("/proc/\(shell)/task/\(shell)/children")
                    .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                for child in pager { Glibc.kill(child, SIGABRT) }
                try await tmux.waitFor("t", showing: "crash-status-134")
                modes = try await tmux.terminalModes("t")
                #expect(!modes.alternateScreen && modes.cursorVisible)

                // Nothing listens on the daemon's port once it is gone.
                daemon.send(signal: SIGTERM)
                _ = try await daemon.waitForExit(timeout: .seconds(10))
                try await tmux.type("t", "clear; " + (try pagerCommand(daemon)) + "; echo refused-status-$?", enter: true)
                let screen = try await tmux.waitFor("t", showing: "refused-status-1")
                #expect(screen.contains("cannot connect to 127.0.0.1:\(daemon.port)"), "\(screen)")
                modes = try await tmux.terminalModes("t")
                #expect(!modes.alternateScreen && modes.cursorVisible)
            }
        }
    }

    @Test("tokens out of ps: --token-file, PAGESYNC_TOKEN and --token - (no echo) give control; your name and ⚑ show")
    func tokensFromFileEnvironmentAndPrompt() async throws {
        try await withDaemon(Self.fivePages, arguments: ["--token", "s3cret"]) { daemon, workspace in
            try workspace.write("token", "s3cret\n")
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "file", daemon, ["--token-file", workspace.root.path + "/token", "--name", "pat"])
                try await tmux.waitFor("file", showing: "you: pat ⚑")
                try await tmux.press("file", "Space")
                try await tmux.waitFor("file", showing: "this is page 2", "page 2/5", "leading")

                try await tmux.openTerminal("env")
                try await tmux.type("env", "PAGESYNC_TOKEN=s3cret " + (try pagerCommand(daemon, ["--name", "eve"])), enter: true)
                try await tmux.waitFor("env", showing: "this is page 2", "you: eve ⚑")
                try await tmux.press("env", "Space")
                try await tmux.waitFor("file", showing: "this is page 3", "page 3/5")

                try await tmux.openTerminal("ask")
                try await tmux.type("ask", try pagerCommand(daemon, ["--token", "-", "--name", "ask"]), enter: true)
                try await tmux.waitFor("ask", showing: "control token:")
                try await tmux.type("ask", "s3cret")
                #expect(!(try await tmux.screen("ask")).contains("s3cret"), "the token is not echoed")
                try await tmux.press("ask", "Enter")
                try await tmux.waitFor("ask", showing: "this is page 3", "you: ask ⚑")

            }
        }
    }

    @Test("bad names and token options get a clear one-line error before connecting")
    func badNamesAndTokenOptions() async throws {
        try await withWorkspace { workspace in
            let pagesync = try Binaries.path(of: "pagesync")
            let spaced = try await runPagerTestProcess(pagesync, ["127.0.0.1:1", "--name", "Ann Smith"], in: workspace)
            #expect(spaced.status == 64, "\(spaced.output)")
            #expect(spaced.output.contains("--name \"Ann Smith\": names are 1-32 of A-Z a-z 0-9 . _ - (no spaces), for example Ann_Smith"),
                    "\(spaced.output)")
            let both = try await runPagerTestProcess(pagesync, ["127.0.0.1:1", "--token", "a", "--token-file", "/x"], in: workspace)
            #expect(both.status == 64 && both.output.contains("give either --token or --token-file, not both"), "\(both.output)")
            let missing = try await runPagerTestProcess(pagesync, ["127.0.0.1:1", "--token-file", workspace.root.path + "/none"],
                                                        in: workspace)
            #expect(missing.status == 2 && missing.output.contains("--token-file \(workspace.root.path)/none: No such file"),
                    "\(missing.output)")
            let help = try await runPagerTestProcess(pagesync, ["--help"], in: workspace)
            #expect(help.output.contains("--token-file") && help.output.contains("PAGESYNC_TOKEN"), "\(help.output)")
        }
    }
}
