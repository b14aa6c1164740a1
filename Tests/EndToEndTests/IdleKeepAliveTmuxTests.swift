import Foundation
import Testing

/// A daemon that closes idle connections (`--idle-timeout 2`) says so in its greeting
/// (`idle=2`), and the clients that only follow keep their connections with a `PING`:
/// the pager and the speaker's notes view, in real terminals (tmux).
@Suite("Idle timeout and followers (tmux)", .timeLimit(.minutes(2)))
struct IdleKeepAliveTmuxTests {
    @Test("with --idle-timeout 2 a reading pager and a notes view stay connected through 5 s of silence")
    func followersStayConnected() async throws {
        try await withDaemon(["talk.md": try NotesTests.deck()], arguments: ["--idle-timeout", "2"]) { daemon, workspace in
            let (probe, hello) = try await daemon.join(label: "probe")
            #expect(hello.raw.hasSuffix(" idle=2"), "the greeting says the timeout: \(hello.raw)")
            try await probe.send("QUIT")
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("reader", columns: 90, rows: 12)
                try await tmux.type("reader", try pagerCommand(daemon, ["--name", "rea"]), enter: true)
                try await tmux.waitFor("reader", showing: "Why terminals", "page 1/5")
                try await tmux.openTerminal("notes", columns: 90, rows: 16)
                try await tmux.type("notes", try pagerCommand(daemon, ["--notes", "--name", "nts"]), enter: true)
                try await tmux.waitFor("notes", showing: "Speaker notes · room talk · page 1 of 5")
                try await Task.sleep(for: .seconds(5))
                let (client, _) = try await daemon.join(label: "info")
                let info = try await client.command("INFO clients")
                #expect(info.lines.contains("closed_idle:0"), "nobody was closed as idle: \(info.lines)")
                let who = try await client.command("WHO")
                #expect(who.lines.contains { $0.hasPrefix("rea ") } && who.lines.contains { $0.hasPrefix("nts ") },
                        "both still members: \(who.lines)")
                let reader = try await tmux.screen("reader")
                #expect(!reader.contains("idle"), "the pager shows no goodbye:\n\(reader)")
                let pings = try await NotesViewTmuxTests.commandCount(daemon, "ping")
                #expect(pings >= 4, "each sent PINGs meanwhile (about one a second each): \(pings)")
            }
        }
    }
}
