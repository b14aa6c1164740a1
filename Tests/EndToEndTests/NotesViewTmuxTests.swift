import Foundation
import Testing

/// The speaker's notes view (`pagesync --notes`) in tmux terminals beside a presenter's pager and
/// an audience's, against the real daemon serving the repository's presenterm deck.
@Suite("Speaker notes view (tmux)", .timeLimit(.minutes(2)))
struct NotesViewTmuxTests {
    /// The daemon's `INFO stats` counter `command_<name>`.
    static func commandCount(_ daemon: Daemon, _ name: String) async throws -> Int {
        let (client, _) = try await daemon.join(label: "info")
        let info = try await client.command("INFO stats")
        let line = info.lines.first { $0.hasPrefix("command_\(name):") }
        guard let value = line.flatMap({ Int($0.dropFirst("command_\(name):".count)) }) else {
            throw HarnessError("INFO stats has no command_\(name): \(info)")
        }
        return value
    }

    /// Polls `terminal` until it shows every text; returns how long that took.
    static func timed(_ tmux: PagerTmux, _ terminal: String, since start: ContinuousClock.Instant,
                      showing texts: [String]) async throws -> Duration {
        try await tmux.waitFor(terminal, texts.map { "\"\($0)\"" }.joined(separator: " and ")) { screen in
            texts.allSatisfy { screen.contains($0) }
        }
        return ContinuousClock.now - start
    }

    @Test("] in the presenter's pager or in the notes view moves both; the notes view shows page 3's notes and page 4's heading; one NOTES per turn, none idle; the audience never sees a note")
    func presenterAndNotesView() async throws {
        try await withDaemon(["talk.md": try NotesTests.deck()], arguments: ["--token", "s3cret"]) { daemon, workspace in
            try workspace.write("token", "s3cret\n")
            let token = workspace.root.appendingPathComponent("token").path
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("notes", columns: 90, rows: 16)
                try await tmux.type("notes", try pagerCommand(daemon, ["--notes", "--name", "speaker", "--token-file", token]), enter: true)
                try await tmux.waitFor("notes", showing: "Speaker notes · room talk · page 1 of 5", "Ask who has given a talk",
                                       "Next: page 2 · The room", "0:00 (starts at the first page turn)")
                try await tmux.openTerminal("presenter", columns: 90, rows: 16)
                try await tmux.type("presenter", try pagerCommand(daemon, ["--name", "ann", "--token-file", token]), enter: true)
                try await tmux.waitFor("presenter", showing: "Why terminals", "page 1/5")
                try await tmux.openTerminal("audience", columns: 90, rows: 16)
                try await tmux.type("audience", try pagerCommand(daemon, ["--name", "bob"]), enter: true)
                try await tmux.waitFor("audience", showing: "Why terminals", "page 1/5")
                var audienceScreens = [try await tmux.screen("audience")]
                let notesAsked = try await Self.commandCount(daemon, "notes")
                #expect(notesAsked == 1, "the notes view asked for page 1's notes once")

                var latencies: [(String, Duration)] = []
                // ] in the presenter's pager: both move.
                var start = ContinuousClock.now
                try await tmux.type("presenter", "]")
                latencies.append(("presenter ] → notes view page 2", try await Self.timed(tmux, "notes", since: start,
                    showing: ["page 2 of 5", "Draw the coordinator on the whiteboard.", "Next: page 3 · Page three"])))
                try await tmux.waitFor("presenter", showing: "One truth", "page 2/5")
                audienceScreens.append(try await tmux.waitFor("audience", showing: "One truth", "page 2/5"))

                // ] in the notes view: both move; page 3's notes and page 4's heading.
                start = ContinuousClock.now
                try await tmux.type("notes", "]")
                latencies.append(("notes ] → notes view page 3", try await Self.timed(tmux, "notes", since: start,
                    showing: ["page 3 of 5", "SECRET-NOTE-THREE: slow down here.", "Next: page 4 · Page four heading"])))
                latencies.append(("notes ] → presenter page 3", try await Self.timed(tmux, "presenter", since: start,
                    showing: ["Followers reconcile", "page 3/5"])))
                audienceScreens.append(try await tmux.waitFor("audience", showing: "Followers reconcile", "page 3/5"))
                try await tmux.waitFor("notes", "the timer running since the first turn") { $0.contains("since the first turn") }

                // Idle: no more NOTES than one per turn.
                try await Task.sleep(for: .seconds(2))
                #expect(try await Self.commandCount(daemon, "notes") == 3, "one NOTES per page turn, none while idle")

                // Back with [ in the notes view, then digits and Enter.
                try await tmux.type("notes", "[")
                try await tmux.waitFor("notes", showing: "page 2 of 5", "Draw the coordinator")
                try await tmux.type("notes", "5")
                try await tmux.press("notes", "Enter")
                try await tmux.waitFor("notes", showing: "page 5 of 5", "Next: (this is the last page)")
                audienceScreens.append(try await tmux.waitFor("audience", showing: "page 5/5"))
                try await tmux.waitFor("presenter", showing: "page 5/5")

                for screen in audienceScreens {
                    for word in NotesTests.noteWords {
                        #expect(!screen.contains(word), "the audience saw \(word):\n\(screen)")
                    }
                }
                try TestArtefacts.write("notes-view-latency.txt",
                    latencies.map { "\($0.0): \($0.1.milliseconds) ms" }.joined(separator: "\n") + "\n")
                try TestArtefacts.write("notes-view-screen.txt", try await tmux.screen("notes"))

                try await tmux.type("notes", "q")
                try await tmux.waitForShell("notes")
            }
        }
    }

    @Test("without control the notes view quits with one line; with a wrong token likewise; --notes --follow is refused")
    func refusals() async throws {
        try await withDaemon(["talk.md": try NotesTests.deck()], arguments: ["--token", "s3cret"]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 200, rows: 10)
                try await tmux.type("t", try pagerCommand(daemon, ["--notes"]) + "; echo status=$?", enter: true)
                try await tmux.waitFor("t", showing: "pagesync --notes: speaker notes need control of the room; room talk is a presenter room: give the room's token (--token, --token-file or PAGESYNC_TOKEN)", "status=1")
                try await tmux.type("t", "clear; PAGESYNC_TOKEN=wrong " + (try pagerCommand(daemon, ["--notes"])) + "; echo status=$?", enter: true)
                try await tmux.waitFor("t", showing: "pagesync --notes: the server refused the token:", "status=1")
            }
            let both = try await runPagerTestProcess(try Binaries.path(of: "pagesync"),
                                                     ["127.0.0.1:\(daemon.port)", "--notes", "--follow"], in: workspace)
            #expect(both.status == 64 && both.output.contains("--notes and --follow: the notes view turns the room's page; choose one"), "\(both)")
            let piped = try await runPagerTestProcess(try Binaries.path(of: "pagesync"),
                                                      ["127.0.0.1:\(daemon.port)", "--notes", "--token", "s3cret"], in: workspace)
            #expect(piped.status == 1 && piped.output.contains("pagesync --notes: the notes view needs a terminal"), "\(piped)")
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
