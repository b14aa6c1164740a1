import Foundation
import Testing

/// The audience against the real daemon: `VIEW` and `HAND` are presence (no version, never
/// saved), `WHO` and `STATUS` show them, and members with control get coalesced `AUDIENCE`
/// events that members without control never see.
@Suite("The audience", .timeLimit(.minutes(1)))
struct AudienceTests {
    static let deck = Documents.formFeed(pages: 5)

    /// Reads lines until an `AUDIENCE` line matching `condition` arrives (events and replies in between are skipped).
    static func audience(_ client: LineClient, _ what: String, _ condition: (ServerLine) -> Bool) async throws -> ServerLine {
        for _ in 0..<50 {
            let line = try await client.readServerLine()
            if line.kind == "AUDIENCE", condition(line) { return line }
        }
        throw HarnessError("no AUDIENCE with \(what)")
    }

    @Test("VIEW and HAND: WHO and STATUS show them, the version never moves, the presenter's AUDIENCE counts them; the audience never gets AUDIENCE")
    func viewsHandsAndCounts() async throws {
        try await withDaemon(["talk.txt": Self.deck], arguments: ["--token", "s3cret"]) { daemon, _ in
            let (presenter, _) = try await daemon.join(label: "presenter")
            try await presenter.ok("NAME ann")
            try await presenter.send("AUTH s3cret")
            #expect(try await presenter.readServerLine().raw == "OK AUTH control=yes")
            let first = try await presenter.readServerLine()
            #expect(first.raw == "AUDIENCE room=talk following=0 browsing=0 hands=0", "once after AUTH; presenters are not their own audience")

            let (bob, hello) = try await daemon.join(label: "bob")
            try await bob.ok("NAME bob")
            #expect(try await bob.command("VIEW BROWSE 3").header.raw == "OK VIEW browse:3")
            #expect(try await bob.command("HAND UP").header.raw == "OK HAND up")
            let (cid, _) = try await daemon.join(label: "cid")
            try await cid.ok("NAME cid")
            try await cid.ok("HAND UP")

            let counted = try await Self.audience(presenter, "1 following, 1 browsing, 2 hands") {
                $0["following"] == "1" && $0["browsing"] == "1" && $0["hands"] == "2"
            }
            #expect(counted["first"] == "bob", "the hand up longest")
            let status = try await presenter.command("STATUS").header
            #expect(status["following"] == "1" && status["browsing"] == "1" && status["hands"] == "2", "\(status.raw)")
            #expect(status.version == hello.version, "presence never moves the version")
            let who = try await presenter.command("WHO")
            #expect(who.lines.contains("bob control=no view=browse:3 hand=up you=no"), "\(who.lines)")
            #expect(who.lines.contains("ann control=yes view=follow hand=down you=yes"))

            // Errors: each one line, nothing changed.
            #expect(try await bob.command("VIEW BROWSE 9").header.raw == "ERR 416 no page 9: this document has 5 pages")
            #expect(try await bob.command("VIEW SIDEWAYS").header.raw.hasPrefix("ERR 400 \"SIDEWAYS\" is not FOLLOW or BROWSE"))
            #expect(try await bob.command("HAND DOWN cid").header.raw == "ERR 403 lowering others' hands needs control; send AUTH <token>")
            #expect(try await presenter.command("HAND DOWN zed").header.raw == "ERR 404 no member zed in room talk")
            #expect(try await presenter.command("HAND DOWN bob").header.raw == "OK HAND DOWN 1")
            #expect(try await presenter.command("HAND DOWN ALL").header.raw == "OK HAND DOWN 1")
            try await bob.ok("PING told")
            #expect(bob.takeSkippedEvents().map(\.raw).contains("HAND down by=ann"), "bob is told who lowered his hand")
            _ = try await Self.audience(presenter, "no hands") { $0["hands"] == "0" && $0["browsing"] == "1" }
            try await bob.ok("VIEW FOLLOW")
            _ = try await Self.audience(presenter, "2 following") { $0["following"] == "2" && $0["browsing"] == "0" }

            // The audience never gets AUDIENCE: a PING barrier after everything above.
            for member in [bob, cid] {
                try await member.send("PING done")
                while true {
                    let line = try await member.readServerLine()
                    #expect(line.kind != "AUDIENCE", "\(member.label) got \(line.raw)")
                    if line.raw == "OK PONG done" { break }
                }
            }
            #expect(try await presenter.command("STATUS").header.version == hello.version)
        }
    }

    @Test("WHO lists raised hands first, the longest up first, then in join order: a hand is on the first page of a room of any size")
    func whoListsHandsFirst() async throws {
        try await withDaemon(["talk.txt": Self.deck], arguments: ["--who-page-size", "2"]) { daemon, _ in
            var clients: [LineClient] = []
            for name in ["ann", "bob", "cy", "dee"] {
                let (client, _) = try await daemon.join(label: name)
                try await client.ok("NAME \(name)")
                clients.append(client)
            }
            try await clients[3].ok("HAND UP")
            try await clients[2].ok("HAND UP")
            let first = try await clients[0].command("WHO")
            #expect(first.lines.map { $0.split(separator: " ")[0] } == ["dee", "cy"], "\(first.lines)")
            let second = try await clients[0].command("WHO 2")
            #expect(second.lines.map { $0.split(separator: " ")[0] } == ["ann", "bob"], "\(second.lines)")
        }
    }

    @Test("a flood of VIEW and HAND changes reaches the presenter as at most 4 AUDIENCE events a second, the last one right; the version stays and the audience gets nothing")
    func floodIsCoalesced() async throws {
        try await withDaemon(["talk.txt": Self.deck], arguments: ["--token", "s3cret"]) { daemon, _ in
            let (presenter, hello) = try await daemon.join(label: "presenter")
            try await presenter.ok("AUTH s3cret")
            let (flooder, _) = try await daemon.join(label: "flooder")
            let (quiet, _) = try await daemon.join(label: "quiet")
            let started = ContinuousClock.now
            for i in 0..<400 { try await flooder.send(i % 2 == 0 ? "VIEW BROWSE 2" : "VIEW FOLLOW") }
            for i in 0..<100 { try await flooder.send(i % 2 == 0 ? "HAND UP" : "HAND DOWN") }
            try await flooder.send("VIEW BROWSE 4")
            for _ in 0..<501 { _ = try await flooder.readServerLine() }
            // Nothing of it reached a member without control: its next line is its own reply.
            try await quiet.send("PING after")
            #expect(try await quiet.readServerLine().raw == "OK PONG after")
            #expect(try await flooder.command("STATUS").header.version == hello.version, "presence moves no version")
            // The last state: the flooder browsing, quiet following (the presenter is not counted).
            var events = 0
            var last: ServerLine?
            while last == nil || last?["browsing"] != "1" || last?["following"] != "1" {  // quiet follows
                let line = try await presenter.readServerLine()
                if line.kind == "AUDIENCE" { events += 1; last = line }
            }
            let seconds = Double((ContinuousClock.now - started).components.seconds) + 0.25
            #expect(Double(events) <= 4 * seconds + 2, "\(events) AUDIENCE events in \(seconds) s")
        }
    }
}
