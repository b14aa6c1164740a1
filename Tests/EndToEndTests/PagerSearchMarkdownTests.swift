import Foundation
import Testing

/// The pager as a reader, in a real terminal (tmux) against the real daemon: search with
/// highlighted matches, regex, smart case, the `&` filter, a search going on through the room's
/// pages (and `n` showing the match there, detached), and markdown rendering chosen by the
/// document's name.
@Suite("Pager search and markdown (tmux)", .timeLimit(.minutes(1)))
struct PagerSearchAndMarkdownTests {
    static let notes = "apple pie\nbanana split\nApple crumble\ncherry tart\n\u{0C}plum jam\n\u{0C}one more apple\n"
    static let slides = """
        # Welcome

        Some *emphasis* and `code`.

        | fruit | n |
        |-------|--:|
        | fig   | 12 |
        ---
        ## Second

        - one
        - two
        ---
        ### Third
        """

    func start(_ tmux: PagerTmux, _ name: String, _ daemon: Daemon, _ arguments: [String] = [], environment: String = "env -u NO_COLOR",
               columns: Int = 80, expecting texts: String...) async throws {
        try await tmux.openTerminal(name, columns: columns)
        try await tmux.type(name, environment + " " + (try pagerCommand(daemon, arguments)), enter: true)
        try await tmux.waitFor(name, "\(texts)") { screen in texts.allSatisfy { screen.contains($0) } }
    }

    @Test("search: matches in reverse video, case-smart, regex, bad pattern message, & filter; n goes on to the next page detached")
    func search() async throws {
        try await withDaemon(["notes.txt": Self.notes]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                // 120 columns: the status line has room for "detached", the room's page and the message.
                try await start(tmux, "t", daemon, columns: 120, expecting: "apple pie", "page 1/3")

                // Lowercase: case-insensitive; both apples are marked in reverse video.
                try await tmux.type("t", "/apple")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "/apple: line 1")
                let marked = try await tmux.screenWithEscapes("t")
                #expect(marked.contains("\u{1B}[7mapple"), "\(marked.debugDescription)")
                #expect(marked.contains("\u{1B}[7mApple"), "\(marked.debugDescription)")
                #expect(!marked.contains("\u{1B}[7mbanana"), "\(marked.debugDescription)")

                // Uppercase: case-sensitive. A regex.
                try await tmux.type("t", "/Apple")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "/Apple: line 3")
                try await tmux.type("t", "/^c.*t$")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "/^c.*t$: line 4")
                let regex = try await tmux.screenWithEscapes("t")
                #expect(regex.contains("\u{1B}[7mcherry tart"), "\(regex.debugDescription)")

                // A bad pattern: one clear line, and the pager goes on.
                try await tmux.type("t", "/(unclosed")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "bad pattern (unclosed:")

                // & shows only matching lines; & Enter alone shows them all again.
                try await tmux.type("t", "&an")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", "only banana") { screen in
                    screen.contains("banana split") && !screen.contains("apple pie") && !screen.contains("cherry")
                }
                try await tmux.type("t", "&!an")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", "all but banana") { screen in
                    screen.contains("apple pie") && screen.contains("cherry tart") && !screen.contains("banana")
                }
                try await tmux.type("t", "&")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "apple pie", "banana split", "cherry tart", "filter off")

                // A search with no match on this page goes on through the room's pages without
                // moving: / says where the next match is.
                try await tmux.type("t", "/plum")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "apple pie", "/plum: not on this page; on page 2, line 1 · n goes there")
                #expect(try await tmux.statusLine("t").contains("following"))

                // n past the last match: the next page with a match, on our own; the room stays.
                try await tmux.type("t", "/apple")
                try await tmux.press("t", "Enter")
                try await tmux.type("t", "n")
                try await tmux.waitFor("t", showing: "Apple crumble", "/apple: line 3")
                try await tmux.type("t", "n")
                try await tmux.waitFor("t", showing: "one more apple", "page 3 line 1 · the search detached you",
                                      "detached · room on 1/3")
                let stats = try await daemon.join().1
                #expect(stats.page == 1, "the room did not move: \(stats)")
                try await tmux.type("t", "F")
                try await tmux.waitFor("t", showing: "apple pie", "page 1/3")
            }
        }
    }

    @Test("markdown: slides.md is split at --- and rendered; notes.txt stays text; --plain and TERM=dumb")
    func markdown() async throws {
        try await withDaemon(["notes.txt": Self.notes, "slides.md": Self.slides]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await start(tmux, "md", daemon, ["--room", "slides"], expecting: "Welcome", "page 1/3")
                let screen = try await tmux.screen("md")
                #expect(!screen.contains("# Welcome") && !screen.contains("*emphasis*") && !screen.contains("`code`"), "\(screen)")
                #expect(screen.contains("═══════"), "\(screen)")
                #expect(screen.contains("fruit │  n") && screen.contains("fig   │ 12"), "\(screen)")
                let styled = try await tmux.screenWithEscapes("md")
                #expect(styled.contains("\u{1B}[3memphasis") || styled.contains(";3memphasis"), "\(styled.debugDescription)")
                try await tmux.type("md", "]")
                try await tmux.waitFor("md", showing: "Second", "• one", "page 2/3")

                // The text document in the same daemon: its own split (form feeds), shown as text.
                try await start(tmux, "txt", daemon, ["--room", "notes"], expecting: "apple pie", "page 1/3")

                // --plain shows the markdown source.
                try await start(tmux, "plain", daemon, ["--room", "slides", "--plain"], expecting: "## Second", "page 2/3")

                // TERM=dumb: readable, and not one escape sequence reaches the terminal.
                try await start(tmux, "dumb", daemon, ["--room", "slides"], environment: "env TERM=dumb",
                                expecting: "Second", "• two", "page 2/3")
                let dumb = try await tmux.screenWithEscapes("dumb")
                #expect(!dumb.contains("\u{1B}"), "\(dumb.debugDescription)")
                #expect(!dumb.contains("## Second"), "\(dumb)")
            }
        }
    }
}
