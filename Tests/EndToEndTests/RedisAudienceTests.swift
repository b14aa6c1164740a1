import Foundation
import Testing

/// The audience across daemons sharing rooms through one redis-server: a presenter on one
/// daemon counts the members of the other.
@Suite("The audience through Redis", .timeLimit(.minutes(2)))
struct RedisAudienceTests {
    /// Two daemons sharing a presenter room through one redis-server: a presenter (with control)
    /// on the first, bob on the second.
    func withTwoDaemons(prefix: String, _ body: ([Daemon], LineClient, LineClient) async throws -> Void) async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            try workspace.write("talk.txt", Documents.formFeed(pages: 4))
            var daemons: [Daemon] = []
            for i in 0..<2 {
                daemons.append(try await workspace.startDaemon(documents: ["talk.txt"], arguments: [
                    "--redis", redis.url, "--redis-prefix", "\(prefix)\(ProcessInfo.processInfo.processIdentifier):", "--token", "s3cret",
                    "--state-dir", workspace.url("s\(i)").path]))
            }
            let (presenter, _) = try await daemons[0].join(label: "presenter")
            try await presenter.ok("AUTH s3cret")
            let (bob, _) = try await daemons[1].join(label: "bob")
            try await body(daemons, presenter, bob)
        }
    }

    @Test("a member on another daemon browsing with a hand up reaches the presenter's AUDIENCE and STATUS within about half a second; leaving takes it out")
    func countsEveryDaemonsMembers() async throws {
        try await withTwoDaemons(prefix: "a") { daemons, presenter, bob in
            try await bob.ok("NAME bob")
            let start = ContinuousClock.now
            try await bob.ok("VIEW BROWSE 2")
            try await bob.ok("HAND UP")
            let seen = try await AudienceTests.audience(presenter, "bob's browsing and hand from the other daemon") {
                $0["browsing"] == "1" && $0["hands"] == "1" && $0["following"] == "0"
            }
            let took = ContinuousClock.now - start
            #expect(seen.raw.hasPrefix("AUDIENCE room=talk following=0 browsing=1 hands=1"), "\(seen.raw)")
            let status = try await presenter.command("STATUS").header
            #expect(status["browsing"] == "1" && status["hands"] == "1", "\(status.raw)")
            try await bob.send("QUIT")
            _ = try await AudienceTests.audience(presenter, "bob gone") { $0["browsing"] == "0" && $0["hands"] == "0" }
            try TestArtefacts.write("redis-audience-latency.txt", "another daemon's VIEW and HAND to the presenter's AUDIENCE: \(took.milliseconds) ms\n")
        }
    }

    @Test("a daemon killed with SIGKILL: its members stay counted while their presence lives, and leave the counts when it expires, as they leave WHO")
    func aDeadDaemonsMembersLeaveTheCounts() async throws {
        try await withTwoDaemons(prefix: "k") { daemons, presenter, bob in
            try await bob.ok("VIEW BROWSE 2")
            try await bob.ok("HAND UP")
            _ = try await AudienceTests.audience(presenter, "bob's browsing and hand") { $0["browsing"] == "1" && $0["hands"] == "1" }
            daemons[1].kill9()
            let killed = ContinuousClock.now
            let right = try await presenter.command("STATUS").header
            #expect(right["browsing"] == "1" && right["hands"] == "1", "still counted while its presence lives: \(right.raw)")
            var last = right
            while ContinuousClock.now - killed < .seconds(40), last["browsing"] != "0" || last["hands"] != "0" {
                try await Task.sleep(for: .milliseconds(500))
                last = try await presenter.command("STATUS").header
            }
            #expect(last["browsing"] == "0" && last["hands"] == "0" && last["following"] == "0",
                    "the dead daemon's member left the counts: \(last.raw)")
            let who = try await presenter.command("WHO")
            #expect(!who.lines.contains { $0.contains("view=browse") }, "and WHO: \(who.lines)")
            try TestArtefacts.write("redis-audience-expiry.txt", "a SIGKILLed daemon's member out of the counts after \((ContinuousClock.now - killed).milliseconds) ms (presence TTL 20 s)\n")
        }
    }
}
