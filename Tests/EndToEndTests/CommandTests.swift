import Testing

/// Every command of PROTOCOL.md, against the real daemon.
@Suite("Commands", .timeLimit(.minutes(1)))
struct CommandTests {
    /// Page 2 has lines that need dot-stuffing: ".", "..", ".dot" and an empty line.
    static let stuffedDocument = "first page\n\u{0C}\n.dot at the start\n.\n..\n\nplain line\n\u{0C}\nthird page\n"
    static let stuffedPage = [".dot at the start", ".", "..", "", "plain line"]

    @Test("TEXT sends the page dot-stuffed; unstuffed it is the page's exact lines")
    func textIsDotStuffed() async throws {
        try await withDaemon(["dots.txt": Self.stuffedDocument]) { daemon, _ in
            let (client, hello) = try await daemon.join()
            #expect(hello.pages == 3)
            try await client.send("TEXT 2")
            let header = try await client.readServerLine()
            #expect(header.kind == "OK" && header.words.first == "TEXT", "\(header)")
            #expect(header.page == 2 && header.pages == 3 && header["doc"] == hello["doc"])
            #expect(header.int("bytes") == Array(Self.stuffedPage.map { $0 + "\n" }.joined().utf8).count)
            #expect(header.int("lines") == Self.stuffedPage.count)
            #expect(header["truncated"] == "no")
            var raw: [String] = []
            while true {
                let line = try await client.readLine()
                if line == "." { break }
                raw.append(line)
            }
            // On the wire every line starting with "." carries one extra ".".
            #expect(raw == ["..dot at the start", "..", "...", "", "plain line"])
            #expect(try await client.sync() == [])

            let current = try await client.command("TEXT")
            #expect(current.header.page == 1 && current.lines == ["first page"])
            let third = try await client.command("text 3")
            #expect(third.lines == ["third page"])
            let missing = try await client.command("TEXT 4")
            #expect(missing.header.code == 404, "\(missing)")
        }
    }

    @Test("commands sent in one write: each reply reports the room as it stood at its own command")
    func pipelinedRepliesReportTheirOwnMoment() async throws {
        try await withDaemon(["notes.txt": Documents.formFeed(pages: 4), "other.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, hello) = try await daemon.join()
            let v0 = try #require(hello.version)
            // One write: every command is read and handled in the same loop turn.
            try await client.sendRaw(Array("STATUS\nNEXT\nSTATUS\nROOMS\nJOIN other\nNEXT\nJOIN notes\nFIRST\nSTATUS\n".utf8))
            // Replies in order (PAGE events between them are skipped).
            func reply(_ prefix: String) async throws -> ServerLine {
                let r = try await client.readReply()
                #expect(r.header.raw.hasPrefix(prefix), "expected \(prefix): \(r.header.raw)")
                return r.header
            }
            let status1 = try await reply("OK room=")
            #expect(status1.page == 1 && status1.version == v0, "STATUS before NEXT: \(status1.raw)")
            let ok = try await reply("OK page=")
            #expect(ok.page == 2 && ok.version == v0 + 1)
            let status2 = try await reply("OK room=")
            #expect(status2.page == 2 && status2.version == v0 + 1, "STATUS after NEXT: \(status2.raw)")
            let rooms = try await client.readReply()
            #expect(rooms.header.raw.hasPrefix("OK ROOMS 2"), "\(rooms.header.raw)")
            let notes = try #require(rooms.lines.first { $0.hasPrefix("notes ") })
            #expect(notes.contains("page=2 ") && notes.contains("clients=1"), "ROOMS before FIRST: \(notes)")
            let other = try #require(rooms.lines.first { $0.hasPrefix("other ") })
            #expect(other.contains("page=1 ") && other.contains("clients=0"), "ROOMS before JOIN other: \(other)")
            let joined = try await reply("OK JOIN")
            #expect(joined.page == 1, "JOIN other before its NEXT: \(joined.raw)")
            let next = try await reply("OK page=")
            #expect(next.page == 2)
            let back = try await reply("OK JOIN")
            #expect(back.page == 2 && back.version == v0 + 1, "JOIN notes before FIRST: \(back.raw)")
            let first = try await reply("OK page=")
            #expect(first.page == 1 && first.version == v0 + 2)
            let status3 = try await reply("OK room=")
            #expect(status3.page == 1 && status3.version == v0 + 2, "STATUS after FIRST: \(status3.raw)")
        }
    }

    @Test("TEXT of a page longer than max-text is cut and says truncated=yes")
    func longPageIsTruncated() async throws {
        let long = String(repeating: "0123456789abcdef\n", count: 70_000)  // 1,190,000 bytes > 1 MiB
        try await withDaemon(["long.txt": long + "\u{0C}\nshort\n"]) { daemon, _ in
            let (client, _) = try await daemon.join()
            let reply = try await client.command("TEXT 1")
            #expect(reply.header["truncated"] == "yes", "\(reply.header)")
            #expect(reply.header.int("bytes") == long.utf8.count)
            let received = reply.lines.reduce(0) { $0 + $1.utf8.count + 1 }
            #expect(received <= 1_048_576 + 1 && received > 1_000_000, "got \(received) bytes of text")
            #expect(reply.lines.dropLast().allSatisfy { $0 == "0123456789abcdef" })
            #expect(try await client.command("TEXT 2").header["truncated"] == "no")
        }
    }

    @Test("rooms are named after their files; ROOMS lists them; JOIN moves between them")
    func roomsAndJoin() async throws {
        try await withDaemon([
            "notes.txt": Documents.formFeed(pages: 3),
            "My Deck.txt": Documents.formFeed(pages: 5),  // (a .md file would split at ---)
        ]) { daemon, _ in
            let (a, hello) = try await daemon.join()
            #expect(hello["room"] == "notes", "the first file is the default room")
            try await a.ok("NEXT")
            let rooms = try await a.command("ROOMS")
            #expect(rooms.header.words == ["ROOMS", "2"], "\(rooms)")
            #expect(rooms.lines.count == 2)
            let notes = ServerLine(try #require(rooms.lines.first))
            #expect(notes.kind == "notes" && notes.page == 2 && notes.pages == 3 && notes.version == 1)
            #expect(notes.int("clients") == 1 && notes["control"] == "open" && notes["wrap"] == "no")
            let deck = ServerLine(try #require(rooms.lines.last))
            #expect(deck.kind == "My-Deck" && deck.page == 1 && deck.pages == 5 && deck.int("clients") == 0)

            let (b, _) = try await daemon.join(label: "stays in notes")
            let joined = try await a.ok("JOIN My-Deck")
            #expect(joined.words == ["JOIN"] && joined["room"] == "My-Deck" && joined.page == 1 && joined.pages == 5)
            #expect(joined.version == 0 && joined["control"] == "yes" && joined["name"] != nil)
            #expect(joined["file"] == "My%20Deck.txt" && hello["file"] == "notes.txt", "the document's name, one word")
            try await a.ok("GOTO 4")
            #expect(try await a.readServerLine()["room"] == "My-Deck")
            #expect(try await b.sync() == [], "a move in another room is not pushed to this one")
            let missing = try await a.command("JOIN nowhere").header
            #expect(missing.code == 404, "\(missing)")
            #expect(try await a.ok("STATUS")["room"] == "My-Deck")
            #expect(try await a.command("JOIN bad/name").header.code == 400)
        }
    }

    @Test("NAME and WHO: names show in WHO and as by= in events")
    func nameAndWho() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (a, helloA) = try await daemon.join()
            let (b, helloB) = try await daemon.join()
            let guestA = try #require(helloA["name"])
            let guestB = try #require(helloB["name"])
            #expect(guestA.hasPrefix("guest-") && guestB.hasPrefix("guest-") && guestA != guestB)
            let named = try await a.command("NAME ann").header
            #expect(named.raw == "OK NAME ann")
            let who = try await b.command("WHO")
            #expect(who.header.words == ["WHO", "2"], "\(who)")
            #expect(Set(who.lines) == ["ann control=yes view=follow hand=down you=no", "\(guestB) control=yes view=follow hand=down you=yes"], "\(who)")
            try await a.ok("NEXT")
            #expect(try await b.readServerLine()["by"] == "ann")
            for bad in ["NAME", "NAME a b", "NAME bad/name", "NAME " + String(repeating: "x", count: 33)] {
                #expect(try await a.command(bad).header.code == 400, "\(bad)")
            }
            #expect(try await a.ok("STATUS")["by"] == "ann")
        }
    }

    @Test("names are unique within a room: NAME, guest names and JOIN are refused with ERR 409 name in use")
    func duplicateNamesAreRefused() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3), "other.txt": Documents.formFeed(pages: 2)]) { daemon, _ in
            let (a, _) = try await daemon.join()
            let (b, helloB) = try await daemon.join()
            let guestB = try #require(helloB["name"])
            #expect(try await a.command("NAME ann").header.raw == "OK NAME ann")
            let taken = try await b.command("NAME ann").header
            #expect(taken.code == 409 && taken.raw.hasPrefix("ERR 409 name in use"), "\(taken.raw)")
            let guest = try await a.command("NAME \(guestB)").header
            #expect(guest.code == 409 && guest.raw.hasPrefix("ERR 409 name in use"), "\(guest.raw)")
            #expect(try await a.command("NAME ann").header.raw == "OK NAME ann", "keeping your own name is fine")
            let who = try await b.command("WHO")
            #expect(Set(who.lines) == ["ann control=yes view=follow hand=down you=no", "\(guestB) control=yes view=follow hand=down you=yes"], "\(who)")

            // Another room: the name is free there; coming back to ann's room as ann is refused.
            #expect(try await b.ok("JOIN other")["room"] == "other")
            #expect(try await b.command("NAME ann").header.raw == "OK NAME ann")
            let join = try await b.command("JOIN talk").header
            #expect(join.code == 409 && join.raw.hasPrefix("ERR 409 name in use"), "\(join.raw)")
            #expect(try await b.ok("STATUS")["room"] == "other", "a refused JOIN leaves you where you were")
        }
    }

    @Test("a name is free again once its holder renames, JOINs away or disconnects")
    func freedNamesCanBeTakenAgain() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3), "other.txt": Documents.formFeed(pages: 2)]) { daemon, _ in
            let (a, _) = try await daemon.join(label: "a")
            let (b, _) = try await daemon.join(label: "b")
            #expect(try await a.command("NAME ann").header.raw == "OK NAME ann")
            #expect(try await b.command("NAME ann").header.code == 409)
            // A rename frees the old name.
            #expect(try await a.command("NAME amy").header.raw == "OK NAME amy")
            #expect(try await b.command("NAME ann").header.raw == "OK NAME ann", "freed by a rename")
            // A JOIN away frees it in the room left, and takes it in the room entered.
            #expect(try await b.ok("JOIN other")["room"] == "other")
            #expect(try await a.command("NAME ann").header.raw == "OK NAME ann", "freed by a JOIN away")
            let back = try await b.command("JOIN talk").header
            #expect(back.code == 409 && back.raw.hasPrefix("ERR 409 name in use"), "\(back.raw)")
            // A disconnect frees it (the daemon lets a session go before it closes the connection).
            #expect(try await a.command("QUIT").header.raw == "OK BYE")
            #expect(try await a.readLineOrEOF() == nil)
            #expect(try await b.ok("JOIN talk")["room"] == "talk", "freed by a disconnect")
            // Held again by b in talk: a newcomer there cannot take it.
            let (c, _) = try await daemon.join(label: "c")
            #expect(try await c.command("NAME ann").header.code == 409)
        }
    }

    @Test("STATUS, PING, HELP and QUIT")
    func statusPingHelpQuit() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (client, hello) = try await daemon.join()
            let (other, _) = try await daemon.join(label: "other")
            let status = try await client.ok("STATUS")
            #expect(status["room"] == "talk" && status.page == 1 && status.pages == 6 && status.version == 0)
            #expect(status["by"] == "-" && status["doc"] == hello["doc"] && status["wrap"] == "no")
            #expect(status["control"] == "yes" && status.int("clients") == 2)
            #expect(try await client.command("PING").header.raw == "OK PONG")
            #expect(try await client.command("ping hello  world").header.raw == "OK PONG hello  world")
            let help = try await client.command("HELP")
            #expect(help.header.raw == "OK HELP")
            let verbs = Set(help.lines.compactMap { $0.split(separator: " ").first.map(String.init) })
            for verb in ["NEXT", "PREV", "FIRST", "LAST", "GOTO", "LINE", "MARK", "STATUS", "TEXT", "ROOMS", "JOIN", "NAME", "WHO", "AUTH", "PING", "HELP", "QUIT"] {
                #expect(verbs.contains(verb), "HELP does not list \(verb)")
            }
            #expect(try await client.command("QUIT").header.raw == "OK BYE")
            try await client.expectClosed()
            #expect(try await eventually { try await other.ok("STATUS").int("clients") == 1 }, "QUIT leaves the room")
        }
    }

    @Test("verbs are case-insensitive, blanks are flexible, CRLF works")
    func framingIsForgiving() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (client, _) = try await daemon.join()
            try await client.sendRaw(Array("NeXt\r\n  goto \t 4  \r\nping crlf\r\n".utf8))
            #expect(try await client.readReply().header.page == 2)
            #expect(try await client.readReply().header.page == 4)
            #expect(try await client.readReply().header.raw == "OK PONG crlf")
            // A command split over many writes is still one command.
            for byte in Array("prev\n".utf8) { try await client.sendRaw([byte]) }
            #expect(try await client.readReply().header.page == 3)
        }
    }

    @Test("presenter room: navigation needs AUTH with the right token; following does not")
    func presenterRoomNeedsToken() async throws {
        try await withDaemon(["slides.txt": Documents.formFeed(pages: 4)], arguments: ["--token", "s3cret"]) { daemon, _ in
            let (presenter, hello) = try await daemon.join(label: "presenter")
            #expect(hello["control"] == "no")
            let (follower, _) = try await daemon.join(label: "follower")
            let denied = try await presenter.command("NEXT").header
            #expect(denied.code == 403, "\(denied)")
            let wrong = try await presenter.command("AUTH wrong").header
            #expect(wrong.code == 403, "\(wrong)")
            #expect(try await presenter.command("AUTH s3cre").header.code == 403, "a prefix of the token is wrong")
            #expect(try await presenter.command("AUTH s3cret").header.raw == "OK AUTH control=yes")
            #expect(try await presenter.ok("STATUS")["control"] == "yes")
            let moved = try await presenter.ok("NEXT")
            #expect(moved.page == 2 && moved.version == 1)
            let event = try await follower.readServerLine()
            #expect(event.kind == "PAGE" && event.page == 2)
            #expect(try await follower.command("GOTO 1").header.code == 403, "control is per client")
            #expect(try await follower.command("TEXT").lines == ["this is page 2"], "followers may read")
            #expect(try await follower.ok("STATUS").page == 2)
        }
    }

    @Test("--split chooses how a document is cut into pages", arguments: [
        ("separator:---", "one\n---\ntwo\n---  \nthree\n", 3, "two"),
        ("lines:2", "a\nb\nc\nd\ne\n", 3, "c\nd"),
        ("formfeed", "a\u{0C}b\u{0C}\u{0C}c", 4, "b"),
    ])
    func splitModes(split: String, document: String, pages: Int, secondPage: String) async throws {
        try await withDaemon(["doc.txt": document], arguments: ["--split", split]) { daemon, _ in
            let (client, hello) = try await daemon.join()
            #expect(hello.pages == pages, "\(split): \(hello)")
            let text = try await client.command("TEXT 2")
            #expect(text.lines.joined(separator: "\n") == secondPage, "\(text)")
        }
    }

    @Test("with no document at all the daemon serves its built-in guide")
    func builtInGuide() async throws {
        try await withWorkspace { workspace in
            let daemon = try await workspace.startDaemon()
            let (client, hello) = try await daemon.join()
            #expect(hello["room"] == "guide", "\(hello)")
            #expect((hello.pages ?? 0) >= 2)
            let text = try await client.command("TEXT 1")
            #expect(text.header.kind == "OK" && !text.lines.joined().isEmpty)
            #expect(text.lines.contains { $0.contains("nc -q1 127.0.0.1 \(daemon.port)") },
                    "the guide shows the address the daemon really listens on: \(text.lines)")
            #expect(!text.lines.joined().contains("7777") || daemon.port == 7777)
            #expect(try await client.ok("NEXT").page == 2)
        }
    }
}
