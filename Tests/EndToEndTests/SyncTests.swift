import Testing

/// Several clients, one room: everyone sees the same truth.
@Suite("Rooms stay in sync", .timeLimit(.minutes(1)))
struct SyncTests {
    /// `moverJoins` is how many followers join before the mover: the room's fan-out walks its
    /// members in the order of its member array (join order, while nobody leaves), writing
    /// idle ones directly and sending the mover (whose OK is pending) through its outbox, then
    /// going on with the members after it.
    @Test("several clients see the same PAGE lines, and the mover gets OK before its PAGE", arguments: [0, 2, 4])
    func severalClientsSeeTheSamePageLines(moverJoins: Int) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            var followers: [LineClient] = []
            var mover: LineClient?
            for i in 0..<4 {
                if i == moverJoins { mover = try await daemon.join(label: "mover").0 }
                let (client, hello) = try await daemon.join(label: "follower \(i)")
                #expect(hello["room"] == "talk")
                #expect(hello.page == 1 && hello.pages == 6 && hello.version == 0)
                followers.append(client)
            }
            if mover == nil { mover = try await daemon.join(label: "mover").0 }
            guard let mover else { return }
            try await mover.ok("NAME ann")

            var expected: [String] = []
            for (command, page) in [("NEXT", 2), ("NEXT", 3), ("GOTO 6", 6), ("PREV", 5), ("FIRST", 1), ("LAST", 6)] {
                try await mover.send(command)
                let ok = try await mover.expectLine(prefix: "OK ")
                let version = UInt64(expected.count + 1)
                #expect(ok.page == page && ok.pages == 6 && ok.version == version, "\(command) -> \(ok)")
                let event = try await mover.expectLine(prefix: "PAGE ")
                #expect(event["room"] == "talk" && event.page == page && event.pages == 6)
                #expect(event.version == version && event["by"] == "ann", "\(event)")
                expected.append(event.raw)
            }
            for follower in followers {
                var seen: [String] = []
                for _ in expected { seen.append(try await follower.readLine()) }
                #expect(seen == expected, "\(follower.label) saw a different sequence")
                #expect(try await follower.sync().isEmpty, "\(follower.label) got extra lines")
            }
        }
    }

    @Test("a follower that keeps reading gets every change, even several in one burst")
    func followerGetsEveryChangeOfABurst() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 20)], arguments: ["--no-fsync"]) { daemon, _ in
            let (follower, _) = try await daemon.join(label: "follower")
            let (mover, _) = try await daemon.join(label: "mover")
            // Ten commands in one write: the daemon handles them in one go.
            try await mover.send(lines: Array(repeating: "NEXT", count: 10))
            for version in 1...10 {
                #expect(try await mover.readServerLine().raw == "OK page=\(version + 1) pages=20 version=\(version) line=1 mark=-")
                #expect(try await mover.readServerLine().version == UInt64(version))
            }
            _ = try await mover.sync()
            // PROTOCOL.md: "Every change of a room's state ... is pushed to every client in the room";
            // only a backed-up client has older unsent events replaced. This one is not backed up.
            let versions = try await follower.sync().map { ServerLine($0).version ?? 0 }
            #expect(versions == Array(1...10), "the follower got events for versions \(versions)")
        }
    }

    @Test("an event never splits a multi-line reply, even a big TEXT read slowly")
    func eventsNeverSplitAMultiLineReply() async throws {
        let big = (0..<35_000).map { "line \($0) of a big page\n" }.joined()
        try await withDaemon(["big.txt": big + "\u{0C}\nsmall\n"], arguments: ["--wrap", "--no-fsync"]) { daemon, _ in
            let (reader, _) = try await daemon.join(label: "reader", receiveBufferSize: 8192)
            let (mover, _) = try await daemon.join(label: "mover")
            try await reader.send("TEXT 1")
            try await mover.send(lines: Array(repeating: "NEXT", count: 50))
            for _ in 0..<100 { _ = try await mover.readLine() }
            let header = try await reader.readServerLine()
            // The reply was asked for before any move, so it comes before any event.
            #expect(header.kind == "OK" && header.words.first == "TEXT", "\(header)")
            var count = 0
            while true {
                let line = try await reader.readLine()
                if line == "." { break }
                #expect(!line.hasPrefix("PAGE "), "an event inside the TEXT reply after \(count) lines")
                count += 1
            }
            #expect(count == 35_000, "not truncated: the page is under max-text")
            let after = try await reader.sync().map(ServerLine.init)
            #expect(after.last?.version == 50 && after.allSatisfy { $0.kind == "PAGE" }, "\(after.map(\.raw))")
        }
    }

    @Test("a late joiner's HELLO carries the current state")
    func lateJoinerHelloCarriesCurrentState() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (early, hello) = try await daemon.join()
            #expect(hello["by"] == "-")
            try await early.ok("NAME bob")
            try await early.ok("GOTO 4")
            try await early.ok("NEXT")
            let (_, late) = try await daemon.join(label: "late")
            #expect(late["room"] == "talk")
            #expect(late.page == 5)
            #expect(late.pages == 6)
            #expect(late.version == 2)
            #expect(late["by"] == "bob")
            #expect(late["wrap"] == "no")
            #expect(late["control"] == "yes")
            #expect(late["name"] != nil && late["name"] != "bob")
            #expect(late["doc"] == hello["doc"])
        }
    }

    @Test("clients racing NEXT IF v from the same version: exactly one wins", arguments: [2, 4])
    func conditionalRaceHasExactlyOneWinner(racers: Int) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 40)], arguments: ["--no-fsync"]) { daemon, _ in
            var clients: [LineClient] = []
            for i in 0..<racers { clients.append(try await daemon.join(label: "racer \(i)").0) }
            for step in 0..<15 {
                let status = try await clients[0].ok("STATUS")
                let version = try #require(status.version)
                let page = try #require(status.page)
                // Every request is on the wire before any reply is read.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in clients { group.addTask { try await client.send("NEXT IF \(version)") } }
                    try await group.waitForAll()
                }
                var replies: [ServerLine] = []
                for client in clients { replies.append(try await client.readReply().header) }
                let winners = replies.filter { $0.kind == "OK" }
                let losers = replies.filter { $0.kind != "OK" }
                #expect(winners.count == 1 && losers.allSatisfy { $0.code == 409 }, "step \(step): \(replies)")
                #expect(winners.first?.page == page + 1 && winners.first?.version == version + 1)
                // A 409 carries the room's current state: the winner's move.
                for loser in losers {
                    #expect(loser.page == page + 1 && loser.version == version + 1, "\(loser)")
                }
                // Each client sees exactly one event for the one move.
                for client in clients {
                    let lines = client.takeSkippedEvents().map(\.raw) + (try await client.sync("step\(step)"))
                    let events = lines.filter { $0.hasPrefix("PAGE ") }
                    #expect(events.count == 1, "\(client.label): \(lines)")
                    #expect(events.first.map(ServerLine.init)?.version == version + 1)
                }
            }
            let final = try await clients[0].ok("STATUS")
            #expect(final.page == 16 && final.version == 15)
        }
    }

    @Test("a stale IF gets ERR 409 with the current state and changes nothing")
    func staleConditionalGets409() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (a, _) = try await daemon.join()
            let (b, _) = try await daemon.join()
            try await a.ok("GOTO 3")
            _ = try await b.expectLine(prefix: "PAGE ")
            let conflict = try await a.command("NEXT IF 0").header
            #expect(conflict.code == 409 && conflict.page == 3 && conflict.pages == 6 && conflict.version == 1, "\(conflict)")
            let ok = try await a.ok("NEXT IF 1")
            #expect(ok.page == 4 && ok.version == 2)
            #expect(try await a.sync().map { ServerLine($0).version } == [2], "one event, for NEXT IF 1")
            #expect(try await b.expectLine(prefix: "PAGE ").version == 2)
            #expect(try await b.sync() == [], "the 409 must not send an event")
        }
    }

    @Test("a room that stops at its ends: ERR 416, nothing changes, no event")
    func stoppingRoomRefusesToGoPastItsEnds() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (a, hello) = try await daemon.join()
            #expect(hello["wrap"] == "no")
            let (b, _) = try await daemon.join()
            let first = try await a.command("PREV").header
            #expect(first.code == 416 && first.page == 1 && first.version == 0, "\(first)")
            try await a.ok("LAST")
            let last = try await a.command("NEXT").header
            #expect(last.code == 416 && last.page == 3 && last.version == 1, "\(last)")
            #expect(try await a.sync().filter { $0.hasPrefix("PAGE ") }.isEmpty)
            #expect(try await b.readServerLine().version == 1)
            #expect(try await b.sync() == [])
        }
    }

    @Test("a room that wraps: NEXT on the last page goes to 1, PREV on 1 goes to the last")
    func wrappingRoomWrapsAround() async throws {
        try await withDaemon(["loop.txt": Documents.formFeed(pages: 3)], arguments: ["--wrap"]) { daemon, _ in
            let (a, hello) = try await daemon.join()
            #expect(hello["wrap"] == "yes")
            let prev = try await a.ok("PREV")
            #expect(prev.page == 3 && prev.version == 1)
            let next = try await a.ok("NEXT")
            #expect(next.page == 1 && next.version == 2)
            #expect(try await a.ok("STATUS")["wrap"] == "yes")
        }
    }

    @Test("moving to the page the room is on changes nothing and sends no event")
    func navigationToTheCurrentPageIsANoOp() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 4)]) { daemon, _ in
            let (a, _) = try await daemon.join()
            let (b, _) = try await daemon.join()
            let first = try await a.ok("FIRST")
            #expect(first.page == 1 && first.version == 0)
            try await a.ok("GOTO 2")
            let same = try await a.ok("GOTO 2")
            #expect(same.page == 2 && same.version == 1)
            #expect(try await a.sync().filter { $0.hasPrefix("PAGE ") }.count == 0)
            #expect(try await b.sync().count == 1, "exactly one event, for the one real move")
        }
    }

    @Test("GOTO past the last page gets ERR 404")
    func gotoPastTheEndIs404() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (a, _) = try await daemon.join()
            let reply = try await a.command("GOTO 9").header
            #expect(reply.code == 404, "\(reply)")
            #expect(try await a.ok("STATUS").version == 0)
        }
    }
}
