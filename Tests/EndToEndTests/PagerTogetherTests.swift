import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reading together without surprises (issue 44), against the real daemon in tmux terminals:
/// Space at the end of a page moves the room only when pressed twice, documents split where
/// their structure is, places kept across a daemon restart, a status line that keeps the room
/// and its page at every width.
@Suite("Reading together (tmux)", .timeLimit(.minutes(2)))
struct PagerTogetherTests {
    /// `pages` pages of `lines` lines each at form feeds; line l of page p reads "page p line l".
    static func book(pages: Int, lines: Int) -> String {
        (1...pages).map { p in (1...lines).map { "page \(p) line \($0)" }.joined(separator: "\n") + "\n" }
            .joined(separator: "\u{0C}")
    }

    func open(_ tmux: PagerTmux, _ name: String, _ daemon: Daemon, _ arguments: [String] = [], columns: Int = 100,
              rows: Int = 10, expecting: String...) async throws {
        try await tmux.openTerminal(name, columns: columns, rows: rows)
        try await tmux.type(name, try pagerCommand(daemon, arguments), enter: true)
        try await tmux.waitFor(name, "\(expecting)") { screen in expecting.allSatisfy { screen.contains($0) } }
    }

    @Test("two readers: B's Space at the end of a page moves nobody; the second Space turns it for both; b at the top likewise, to the end of page 1")
    func secondSpaceTurnsTheRoom() async throws {
        try await withDaemon(["book.txt": Self.book(pages: 3, lines: 30)]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                try await open(tmux, "ann", daemon, ["--name", "ann"], expecting: "page 1 line 1", "page 1/3")
                try await open(tmux, "bob", daemon, ["--name", "bob"], expecting: "page 1 line 1", "page 1/3")

                // less's line keys move only bob's screen.
                try await tmux.type("bob", "20g")
                try await tmux.waitFor("bob", showing: "lines 20-28/30")
                try await tmux.type("bob", "2")
                try await tmux.press("bob", "Enter")
                try await tmux.waitFor("bob", showing: "lines 22-30/30", "100% end")
                try await tmux.press("bob", "Space")
                try await tmux.waitFor("bob", showing: "Space again turns the page for everyone (2 readers)")
                let ann = try await tmux.screen("ann")
                #expect(ann.contains("page 1 line 1") && ann.contains("page 1/3"), "the first Space moved nobody:\n\(ann)")
                try await tmux.press("bob", "Space")
                try await tmux.waitFor("ann", showing: "page 2 line 1", "page 2/3", "by bob")
                try await tmux.waitFor("bob", showing: "page 2 line 1", "page 2/3")

                // b at the top: the same, and bob sees the end of page 1, as reading backwards does.
                try await tmux.press("bob", "b")
                try await tmux.waitFor("bob", showing: "b again turns back to page 1 for everyone (2 readers)")
                #expect(try await tmux.screen("ann").contains("page 2 line 1"))
                try await tmux.press("bob", "b")
                try await tmux.waitFor("ann", showing: "page 1 line 1", "page 1/3")
                try await tmux.waitFor("bob", showing: "page 1 line 30", "lines 22-30/30", "100% end")

                // Something else between the two presses starts over.
                try await tmux.press("bob", "Space")
                try await tmux.waitFor("bob", showing: "Space again turns the page for everyone")
                try await tmux.type("bob", "k")
                try await tmux.type("bob", "j")
                try await tmux.press("bob", "Space")
                try await tmux.waitFor("bob", showing: "Space again turns the page for everyone")
                #expect(try await tmux.screen("ann").contains("page 1/3"))

                // Alone in the room, one Space turns.
                try await tmux.type("ann", "q")
                try await tmux.waitForShell("ann")
                try await tmux.press("bob", "Space")
                try await tmux.waitFor("bob", showing: "page 2 line 1", "page 2/3")
            }
        }
    }

    @Test("a deck with front matter and a fenced ---: two pages, its title on the status line, the code block whole")
    func deckWithFrontMatter() async throws {
        let deck = """
            ---
            title: Reading together
            author: ann
            ---

            # Slide one

            ```yaml
            key: a
            ---
            key: b
            ```

            ---

            # Slide two

            """
        try await withDaemon(["deck.md": deck]) { daemon, workspace in
            let (client, hello) = try await daemon.join()
            #expect(hello.pages == 2, "\(hello)")
            #expect(hello["title"] == "Reading%20together", "\(hello)")
            let page1 = try await client.command("TEXT 1").lines
            #expect(page1.contains("key: a") && page1.contains("---") && page1.contains("key: b"), "\(page1)")
            #expect(!page1.contains { $0.hasPrefix("title:") })
            client.close()
            try await withTmux(workspace) { tmux in
                try await open(tmux, "t", daemon, rows: 16, expecting: "Slide one", "Reading together · page 1/2")
                let screen = try await tmux.screen("t")
                #expect(screen.contains("key: a") && screen.contains("key: b"), "\(screen)")
                try await tmux.type("t", "]")
                try await tmux.waitFor("t", showing: "Slide two", "page 2/2")
            }
        }
    }

    @Test("README.md split by its sections: the title and introduction, then a page per ## section")
    func readmeBySections() async throws {
        let readme = try String(contentsOf: SystemdE2E.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var sections = 0
        var fenced = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            if !fenced && line.hasPrefix("## ") { sections += 1 }
        }
        #expect(sections >= 5)
        try await withDaemon(["README.md": readme]) { daemon, workspace in
            let (client, hello) = try await daemon.join()
            #expect(hello.pages == sections + 1, "\(hello)")
            let second = try await client.command("TEXT 2").lines
            #expect(second.first == "## Two commands", "\(second.prefix(3))")
            client.close()
            try await withTmux(workspace) { tmux in
                let count = sections + 1
                func page(_ n: Int) -> String {  // the page number as wide as the count
                    "page " + String(repeating: " ", count: String(count).count - String(n).count) + "\(n)/\(count)"
                }
                try await open(tmux, "t", daemon, expecting: "pagesync", page(1))
                try await tmux.type("t", "]")
                try await tmux.waitFor("t", showing: "Two commands", page(2))
            }
        }
    }

    @Test("man-page text: one page and a logged hint by default, a page per section with --split headings")
    func manPageSections() async throws {
        try await withWorkspace { workspace in
            let source = try workspace.write("demo.1", """
                .TH DEMO 1
                .SH NAME
                demo \\- a page to split
                .SH SYNOPSIS
                .B demo
                [options]
                .SH DESCRIPTION
                It does one thing.
                .SH "SEE ALSO"
                .BR man (1)

                """)
            guard let man = SystemdE2E.which("man") else {
                cannotRunHere(skipped: "man is not installed", underCI: "man is not installed (scripts/test installs man-db)")
                return
            }
            let rendered = try SystemdE2E.run(man, ["-l", source.path], environment: ["MANWIDTH": "80", "PATH": "/usr/bin:/bin"])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            try workspace.write("demo.txt", rendered.stdout)
            let plain = try await workspace.startDaemon(documents: ["demo.txt"])
            let (client, hello) = try await plain.join()
            #expect(hello.pages == 1)
            client.close()
            #expect(try await eventually { plain.stderr.contains("--split headings") }, "\(plain.stderr)")
            #expect(plain.stderr.contains("would make 4 pages at its man-page section headings"), "\(plain.stderr)")

            let split = try await workspace.startDaemon(documents: ["demo.txt"],
                                                        arguments: ["--split", "headings", "--state-dir", workspace.url("state2").path])
            let (reader, greeting) = try await split.join()
            #expect(greeting.pages == 4, "\(greeting)")
            #expect(try await reader.command("TEXT 4").lines.first == "SEE ALSO")
            reader.close()
        }
    }

    @Test("a daemon restart keeps each reader's line, in a room other than the first one")
    func restartKeepsEveryonesLine() async throws {
        try await withWorkspace { workspace in
            try workspace.write("other.txt", "another room\n")
            try workspace.write("book.txt", Self.book(pages: 9, lines: 60))
            let first = try await workspace.startDaemon(documents: ["other.txt", "book.txt"])
            let port = first.port
            try await withTmux(workspace) { tmux in
                try await open(tmux, "ann", first, ["--room", "book", "--name", "ann"], expecting: "page 1 line 1")
                try await open(tmux, "bob", first, ["--room", "book", "--name", "bob"], expecting: "page 1 line 1")
                try await tmux.type("ann", ":7")
                try await tmux.press("ann", "Enter")
                try await tmux.waitFor("bob", showing: "page 7 line 1", "page 7/9")
                try await tmux.type("ann", "46g")
                try await tmux.type("bob", "21g")
                try await tmux.waitFor("ann", showing: "lines 46-54/60")
                try await tmux.waitFor("bob", showing: "lines 21-29/60")

                first.send(signal: SIGTERM)
                _ = try await first.waitForExit(timeout: .seconds(10))
                try await tmux.waitFor("ann", showing: "reconnecting…")
                _ = try await workspace.startDaemon(documents: ["other.txt", "book.txt"], arguments: ["--listen", "127.0.0.1:\(port)"])
                for (name, lines) in [("ann", "lines 46-54/60"), ("bob", "lines 21-29/60")] {
                    try await tmux.waitFor(name, "\(name) back at \(lines)") {
                        $0.contains(lines) && $0.contains("book · page 7/9") && !$0.contains("reconnecting")
                    }
                }
            }
        }
    }

    @Test("the status line shows the room and page n/N at 30, 40, 80 and 180 columns; symbols are in h")
    func statusLineAtEveryWidth() async throws {
        try await withDaemon(["book.txt": Self.book(pages: 23, lines: 40)]) { daemon, workspace in
            try await withTmux(workspace) { tmux in
                for columns in [30, 40, 80, 180] {
                    try await open(tmux, "w\(columns)", daemon, ["--name", "reader\(columns)"], columns: columns,
                                   rows: columns == 180 ? 70 : 10, expecting: "page 1 line 1")
                }
                let (client, _) = try await daemon.join()
                _ = try await client.ok("GOTO 3")
                client.close()
                var lines: [Int: String] = [:]
                for columns in [30, 40, 80, 180] {
                    let screen = try await tmux.waitFor("w\(columns)", showing: "page 3 line 1")
                    let status = String(screen.split(separator: "\n").last ?? "")
                    lines[columns] = status
                    #expect(status.hasPrefix("book · page  3/23"), "\(columns) columns: \(status)")
                    #expect(status.count <= columns, "\(columns) columns: \(status)")
                }
                #expect(lines[80]?.contains("page  3/23 ○ ○ ● ○ ○ … ○ · following · lines 1-9/40 22% more↓") == true, "\(lines[80] ?? "")")
                #expect(lines[180]?.contains("lines 1-40/40 100% end") == false, "\(lines[180] ?? "")")
                #expect(lines[30]?.contains("○") == false, "the dots give way first at 30: \(lines[30] ?? "")")
                // The dots keep their width: what follows them does not move when the page turns.
                let before = lines[180]!.distance(to: "following")
                try await tmux.type("w180", "}")
                let later = try await tmux.waitFor("w180", showing: "page 23 line 1")
                let after = String(later.split(separator: "\n").last ?? "").distance(to: "following")
                #expect(before == after, "\(lines[180]!) / \(later)")

                try await tmux.type("w180", "h")
                try await tmux.waitFor("w180", showing: "The status line, for example", "your name; ⚑: your page turns move the room",
                                       "this page, the others, pages left out", "more below; the page's last screen")
            }
        }
    }
}

private extension String {
    /// The character offset of `other` (its end when absent).
    func distance(to other: String) -> Int {
        guard let r = range(of: other) else { return count }
        return distance(from: startIndex, to: r.lowerBound)
    }
}
