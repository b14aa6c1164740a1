import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The pager seen as a person sees it: real `pagesyncd` and `pagesync` binaries, each pager in
/// its own tmux terminal (80x24 unless the test says otherwise), the screen read with
/// `capture-pane`. Every wait polls the screen; its timeout only guards against a hang.
@Suite("Pager in a terminal (tmux)", .timeLimit(.minutes(1)))
struct PagerTests {
    /// A 5-page document; page n reads "this is page n".
    static let fivePages = ["doc.txt": Documents.formFeed(pages: 5)] as KeyValuePairs

    /// Opens terminal `name`, starts the pager in it and waits for the room's page.
    func startPager(_ tmux: PagerTmux, _ name: String, _ daemon: Daemon, _ arguments: [String] = [],
                    columns: Int = 80, rows: Int = 24, expecting page: Int = 1) async throws {
        try await tmux.openTerminal(name, columns: columns, rows: rows)
        try await tmux.type(name, try pagerCommand(daemon, arguments), enter: true)
        try await tmux.waitFor(name, showing: "this is page \(page)", "page \(page)/5")
    }

    @Test("two pagers on one room: a key in either one moves both, both ways")
    func twoPagersFollowEachOther() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "ann", daemon, ["--name", "ann"])
                try await startPager(tmux, "bob", daemon, ["--name", "bob"])

                try await tmux.type("ann", "]")
                try await tmux.waitFor("bob", showing: "this is page 2", "page 2/5", "following", "by ann")
                try await tmux.waitFor("ann", showing: "this is page 2", "page 2/5")

                try await tmux.type("bob", "]")
                try await tmux.waitFor("ann", showing: "this is page 3", "page 3/5", "by bob")

                try await tmux.type("bob", ":p")
                try await tmux.waitFor("ann", showing: "this is page 2", "page 2/5")
                try await tmux.type("ann", "}")
                try await tmux.waitFor("bob", showing: "this is page 5", "page 5/5")
                try await tmux.type("bob", ":3")
                try await tmux.press("bob", "Enter")
                try await tmux.waitFor("ann", showing: "this is page 3", "page 3/5")
                try await tmux.type("ann", "{")
                let bob = try await tmux.waitFor("bob", showing: "this is page 1", "page 1/5", "● ○ ○ ○ ○")
                #expect(!bob.contains("this is page 3"))
            }
        }
    }

    @Test("printf 'next\\n' | nc moves every pager")
    func netcatMovesBothPagers() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "one", daemon)
                try await startPager(tmux, "two", daemon)
                let nc = try await runPagerTestProcess("/bin/sh", ["-c", "printf 'next\\n' | nc -q1 127.0.0.1 \(daemon.port)"],
                                                       in: workspace)
                #expect(nc.status == 0, "\(nc.output)")
                try await tmux.waitFor("one", showing: "this is page 2", "page 2/5")
                try await tmux.waitFor("two", showing: "this is page 2", "page 2/5")
            }
        }
    }

    @Test("detach with D, browse alone, F snaps back; p pulls the room to your page")
    func detachBrowseFollowAndPull() async throws {
        try await withDaemon(Self.fivePages) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "me", daemon)
                try await startPager(tmux, "other", daemon)

                try await tmux.press("me", "D")
                try await tmux.waitFor("me", showing: "detached")
                try await tmux.press("me", "Space", "Space")
                try await tmux.waitFor("me", showing: "this is page 3", "page 3/5", "detached", "room on 1/5", "F to follow")
                #expect(try await tmux.screen("other").contains("this is page 1"), "browsing moved nobody")

                // The room moves on while I browse: my view stays, the status line says where the room is.
                try await tmux.type("other", "]")
                try await tmux.waitFor("other", showing: "this is page 2")
                try await tmux.waitFor("me", showing: "this is page 3", "room on 2/5")

                try await tmux.press("me", "F")
                try await tmux.waitFor("me", "the room's page 2, following") {
                    $0.contains("this is page 2") && $0.contains("page 2/5") && $0.contains("following") && !$0.contains("detached")
                }

                // Bring everyone here: detach, browse to page 4, pull.
                try await tmux.press("me", "D")
                try await tmux.press("me", "Space", "Space")
                try await tmux.waitFor("me", showing: "this is page 4", "room on 2/5")
                try await tmux.press("me", "p")
                try await tmux.waitFor("other", showing: "this is page 4", "page 4/5")
                try await tmux.waitFor("me", "page 4, following again") {
                    $0.contains("this is page 4") && $0.contains("following") && !$0.contains("detached")
                }
            }
        }
    }

    @Test("a presenter room without a token: page keys detach and say why; the presenter's next turn brings the viewer back, D pins it")
    func presenterRoomWithoutToken() async throws {
        try await withDaemon(Self.fivePages, arguments: ["--token", "s3cret"]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "presenter", daemon, ["--token", "s3cret", "--name", "pat"])
                try await startPager(tmux, "viewer", daemon, columns: 100)

                try await tmux.press("viewer", "Space")
                try await tmux.waitFor("viewer", showing: "this is page 2", "page 2/5", "detached", "room on 1/5", "no control here")
                #expect(try await tmux.screen("presenter").contains("this is page 1"), "the viewer moved nobody")

                try await tmux.press("presenter", "Space", "Space")
                try await tmux.waitFor("presenter", showing: "this is page 3", "page 3/5")
                // Paged away, not pinned: the presenter's turn brings the viewer back, saying so.
                try await tmux.waitFor("viewer", showing: "this is page 3", "page 3/5", "following the room again")

                try await tmux.type("viewer", "D")
                try await tmux.press("viewer", "b")
                try await tmux.waitFor("viewer", showing: "this is page 2", "detached")
                try await tmux.press("viewer", "p")
                try await tmux.waitFor("viewer", showing: "needs control")
                try await tmux.press("presenter", "Space", "Space")
                try await tmux.waitFor("presenter", showing: "this is page 5")
                try await tmux.waitFor("viewer", showing: "this is page 2", "room on 5/5")  // D pins

                try await tmux.press("viewer", "F")
                try await tmux.waitFor("viewer", showing: "this is page 5", "page 5/5", "following", "by pat")
            }
        }
    }

    @Test("resizing the terminal reflows the page to the new width")
    func resizeReflows() async throws {
        let words = (1...30).map { String(format: "word%02d", $0) }.joined(separator: " ")  // 209 columns
        let document = ["long.txt": "\(words)\n\u{0C}\nsecond\n"] as KeyValuePairs
        try await withDaemon(document) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t", columns: 80, rows: 24)
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                let wide = try await tmux.waitFor("t", showing: "word01", "page 1/2")
                let wideRows = wide.split(separator: "\n").filter { $0.contains("word") }
                #expect(wideRows.count == 3 && wideRows.first.map { $0.count == 80 } == true, "\(wide)")

                try await tmux.tmux(["resize-window", "-t", "t", "-x", "40", "-y", "12"])
                let narrow = try await tmux.waitFor("t", "the page reflowed to 40 columns") { screen in
                    let rows = screen.split(separator: "\n")
                    return rows.filter { $0.contains("word") }.count == 6 && rows.last?.contains("page 1/2") == true
                }
                let rows = narrow.split(separator: "\n")
                #expect(rows.allSatisfy { $0.count <= 40 }, "\(narrow)")
                #expect(rows.count == 12, "\(narrow)")
                #expect(narrow.contains("word30"), "\(narrow)")
            }
        }
    }

    @Test("an ERR from the server shows on the status line and the pager goes on; search; a lone Esc cancels a prompt")
    func errorsSearchAndEscape() async throws {
        try await withDaemon(["doc.txt": "alpha\nbeta\ngamma\n\u{0C}\nsecond page\n"]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                try await tmux.type("t", try pagerCommand(daemon), enter: true)
                try await tmux.waitFor("t", showing: "alpha", "page 1/2")

                try await tmux.type("t", ":9")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "no page 9", "page 1/2")

                try await tmux.type("t", "/gam")
                try await tmux.waitFor("t", showing: "/gam")
                try await tmux.press("t", "Enter")
                try await tmux.waitFor("t", showing: "/gam: line 3")

                try await tmux.type("t", "/nothing")
                try await tmux.waitFor("t", showing: "/nothing")
                try await tmux.press("t", "Escape")
                try await tmux.waitFor("t", "the prompt gone after Esc") { screen in
                    let status = screen.split(separator: "\n").last ?? ""
                    return status.hasPrefix("doc · page 1/2") && !status.contains("nothing")
                }
                try await tmux.type("t", "}")
                try await tmux.waitFor("t", showing: "second page", "page 2/2")
            }
        }
    }

    @Test("restarting the daemon: the pager says reconnecting…, then shows the room's page again")
    func daemonRestart() async throws {
        try await withWorkspace { workspace in
            try workspace.write("doc.txt", Documents.formFeed(pages: 5))
            let first = try await workspace.startDaemon(documents: ["doc.txt"])
            let port = first.port
            try await withTmux(workspace) { tmux in
                try await startPager(tmux, "t", first)
                _ = try await runPagerTestProcess("/bin/sh", ["-c", "printf 'goto 3\\n' | nc -q1 127.0.0.1 \(port)"], in: workspace)
                try await tmux.waitFor("t", showing: "this is page 3", "page 3/5")

                first.send(signal: SIGTERM)
                _ = try await first.waitForExit(timeout: .seconds(10))
                try await tmux.waitFor("t", showing: "reconnecting…", "this is page 3")

                _ = try await workspace.startDaemon(documents: ["doc.txt"], arguments: ["--listen", "127.0.0.1:\(port)"])
                try await tmux.waitFor("t", "page 3 again, connected") {
                    $0.contains("this is page 3") && $0.contains("page 3/5") && !$0.contains("reconnecting")
                }
                try await tmux.press("t", "Space")
                try await tmux.waitFor("t", showing: "this is page 4", "page 4/5")
            }
        }
    }

    @Test("pagesync > file writes the whole of a 12 MB single-page document, fetched in pieces, and exits 0")
    func printsALongPageWhole() async throws {
        let page = (1...400_000).map { "\($0) a line of the long page\n" }.joined()
        try await withDaemon(["big.txt": page]) { daemon, workspace in
            let out = workspace.root.path + "/printed.txt"
            let run = try await runPagerTestProcess("/bin/sh", ["-c", "\(try pagerCommand(daemon)) > \(out)"], in: workspace)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.isEmpty, "nothing on stderr: \(run.output)")
            let printed = try String(contentsOfFile: out, encoding: .utf8)
            #expect(printed.utf8.count == page.utf8.count)
            #expect(printed == page)
        }
    }

    @Test("overstrike shows bold and underline; blink and conceal never reach the terminal; NO_COLOR drops colours")
    func renderingOverstrikeBlinkConcealAndNoColor() async throws {
        let page = "N\u{08}NA\u{08}AM\u{08}ME\u{08}E and _\u{08}f_\u{08}i_\u{08}l_\u{08}e\n"
            + "\u{1B}[5mblinking\u{1B}[0m \u{1B}[8mhidden\u{1B}[0m \u{1B}[31mred\u{1B}[0m\n"
        try await withDaemon(["man.txt": page]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("t")
                // swift test runs tests with NO_COLOR=1 in the environment: clear it for this one.
                try await tmux.type("t", "env -u NO_COLOR " + (try pagerCommand(daemon)), enter: true)
                try await tmux.waitFor("t", showing: "NAME and file", "blinking hidden red")
                let colours = try await tmux.screenWithEscapes("t")
                #expect(!colours.contains("^H"), "\(colours)")
                #expect(colours.contains("\u{1B}[1mNAME"), "bold: \(colours)")
                #expect(colours.contains("\u{1B}[4mfile"), "underline: \(colours)")
                #expect(colours.contains("\u{1B}[31mred"), "colour passes: \(colours)")
                #expect(!colours.contains("\u{1B}[5m") && !colours.contains("\u{1B}[8m"), "\(colours)")

                try await tmux.openTerminal("plain")
                try await tmux.type("plain", "NO_COLOR=1 " + (try pagerCommand(daemon)), enter: true)
                try await tmux.waitFor("plain", showing: "NAME and file", "blinking hidden red")
                let plain = try await tmux.screenWithEscapes("plain")
                #expect(plain.contains("\u{1B}[1mNAME"), "styles stay under NO_COLOR: \(plain)")
                #expect(!plain.contains("\u{1B}[31m"), "no colour under NO_COLOR: \(plain)")
            }
        }
    }

    @Test("reading a long page as in less: Space reads on, only the last screen turns the room; --follow never moves it")
    func pagingWithinAPage() async throws {
        let long = (1...41).map { "line \($0) of page one" }.joined(separator: "\n") + "\n\u{0C}page two\n"
        try await withDaemon(["doc.txt": long]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await tmux.openTerminal("reader", columns: 80, rows: 10)
                try await tmux.type("reader", try pagerCommand(daemon, ["--name", "ann"]), enter: true)
                try await tmux.waitFor("reader", showing: "line 1 of page one", "lines 1-9/41", "more↓")
                try await tmux.openTerminal("other", columns: 140, rows: 10)
                try await tmux.type("other", try pagerCommand(daemon, ["--follow"]), enter: true)
                try await tmux.waitFor("other", showing: "line 1 of page one", "page 1/2")

                try await tmux.press("reader", "Space")
                try await tmux.waitFor("reader", showing: "line 10 of page one", "lines 10-18/41", "page 1/2")
                try await tmux.type("reader", "G")
                try await tmux.waitFor("reader", showing: "line 41 of page one", "100% end")
                try await tmux.type("reader", "g")
                try await tmux.waitFor("reader", showing: "line 1 of page one", "lines 1-9/41")
                try await tmux.type("reader", "5j")
                try await tmux.waitFor("reader", showing: "lines 6-14/41")
                #expect(try await tmux.screen("other").contains("line 1 of page one"), "reading moved nobody")

                try await tmux.press("reader", "End")
                try await tmux.waitFor("reader", showing: "lines 33-41/41")
                // A follower is a reader too: the first Space at the end only says what the next one does.
                try await tmux.press("reader", "Space")
                try await tmux.waitFor("reader", showing: "Space again turns the page for everyone (2 readers)")
                #expect(try await tmux.screen("other").contains("line 1 of page one"))
                try await tmux.press("reader", "Space")
                try await tmux.waitFor("other", showing: "page two", "page 2/2", "by ann")
                try await tmux.waitFor("reader", showing: "page two", "page 2/2")

                // A follower only: page turns browse on its own, the room stays.
                try await tmux.type("other", "[")
                try await tmux.waitFor("other", showing: "line 1 of page one", "detached", "follower only")
                try await tmux.press("other", "F")
                try await tmux.waitFor("other", showing: "page two", "following")
                #expect(try await tmux.screen("reader").contains("page two"), "the follower moved nobody")
            }
        }
    }

    @Test("not a terminal: `pagesync | cat` prints the room's current page and exits 0")
    func printsThePageWhenNotATerminal() async throws {
        try await withDaemon(["doc.txt": Documents.formFeed(pages: 5), "other.txt": ".dotted line\nplain\n"]) { daemon, workspace in
            let command = try pagerCommand(daemon)
            var result = try await runPagerTestProcess("/bin/sh", ["-c", "\(command) | cat"], in: workspace)
            #expect(result.status == 0 && result.output == "this is page 1\n", "\(result.output)")

            _ = try await runPagerTestProcess("/bin/sh", ["-c", "printf 'goto 4\\n' | nc -q1 127.0.0.1 \(daemon.port)"], in: workspace)
            result = try await runPagerTestProcess("/bin/sh", ["-c", "\(command) | cat"], in: workspace)
            #expect(result.status == 0 && result.output == "this is page 4\n", "\(result.output)")

            result = try await runPagerTestProcess("/bin/sh", ["-c", "\(command) --room other | cat"], in: workspace)
            #expect(result.status == 0 && result.output == ".dotted line\nplain\n", "\(result.output)")

            result = try await runPagerTestProcess("/bin/sh", ["-c", "\(command) --room nowhere | cat"], in: workspace)
            #expect(result.status == 0 && result.output.contains("404"), "the pipeline's status is cat's: \(result.output)")
            result = try await runPagerTestProcess("/bin/sh", ["-c", "\(command) --room nowhere > /dev/null"], in: workspace)
            #expect(result.status == 1 && result.output.contains("no room"), "\(result.output)")
        }
    }
}
