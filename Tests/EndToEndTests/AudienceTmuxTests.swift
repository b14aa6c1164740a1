import Foundation
import Testing

/// The audience in real pagers (tmux) against the real daemon: a presenter sees where the room is.
@Suite("The audience (tmux)", .timeLimit(.minutes(2)))
struct AudienceTmuxTests {
    @Test("a presenter and three followers: one browses page 3, one raises a hand; the presenter's status line says 2 following · 1 browsing · 1 hand")
    func presenterSeesTheRoom() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 5)], arguments: ["--token", "s3cret"]) { daemon, workspace in
            try workspace.write("token", "s3cret\n")
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("presenter", columns: 120, rows: 8)
                try await tmux.type("presenter", try pagerCommand(daemon, ["--name", "ann", "--token-file",
                                                                           workspace.root.appendingPathComponent("token").path]), enter: true)
                try await tmux.waitFor("presenter", showing: "0 following · 0 browsing")
                for name in ["bob", "cid", "dee"] {
                    try await tmux.openTerminal(name, columns: 100, rows: 8)
                    try await tmux.type(name, try pagerCommand(daemon, ["--name", name]), enter: true)
                    try await tmux.waitFor(name, showing: "this is page 1")
                }
                try await tmux.waitFor("presenter", showing: "3 following · 0 browsing")
                let start = ContinuousClock.now
                try await tmux.type("bob", "D")
                try await tmux.type("bob", "]]")
                try await tmux.type("cid", "A")
                try await tmux.waitFor("bob", showing: "this is page 3", "detached")
                try await tmux.waitFor("presenter", showing: "2 following · 1 browsing · 1 hand (cid)")
                let took = ContinuousClock.now - start
                try await tmux.waitFor("cid", showing: "✋")
                // The overlay: who and where, hands first; d lowers the selected hand.
                try await tmux.type("presenter", "a")
                try await tmux.waitFor("presenter", showing: "> ✋ cid · following", "bob · page 3", "dee · following", "members 1-4 of 4")
                try await tmux.type("presenter", "d")
                try await tmux.waitFor("presenter", showing: "   cid · following", "bob · page 3")
                try await tmux.waitFor("cid", "its hand lowered") { !$0.contains("✋") }
                try await tmux.type("presenter", "q")
                // The room's next page turn leaves bob pinned (he pressed D) and brings nobody else away.
                try await tmux.type("presenter", "]")
                try await tmux.waitFor("dee", showing: "this is page 2")
                try await tmux.waitFor("bob", showing: "this is page 3", "detached")
                // cid's hand is down since d: the counts say so once the coalesced AUDIENCE arrives.
                try await tmux.waitFor("presenter", "2 following · 1 browsing and no hand") { screen in
                    screen.contains("this is page 2") && screen.contains("2 following · 1 browsing") && !screen.contains("hand")
                }
                try TestArtefacts.write("audience-latency.txt", "keys in two followers to the presenter's counts: \(took.milliseconds) ms (tmux polling every 50 ms)\n")
            }
        }
    }
}
