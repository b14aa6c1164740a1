import Foundation
import Testing

/// The room's line and mark shared by three daemons through a real redis-server.
@Suite("LINE and MARK through Redis", .timeLimit(.minutes(2)))
struct RedisFocusTests {
    /// Two pages of 30 and 5 lines.
    private static let doc = (1...30).map { "line \($0)\n" }.joined() + "\u{0C}\n" + (1...5).map { "two \($0)\n" }.joined()

    @Test("LINE and MARK on one daemon reach the others' members; IF, the page's end and a page turn behave as with the journal; a restarted daemon starts at the shared line and mark")
    func threeDaemonsShareTheFocus() async throws {
        try await withWorkspace { workspace in
            let redis = try await RedisServer(in: workspace)
            try workspace.write("walk.txt", Self.doc)
            let prefix = "f\(ProcessInfo.processInfo.processIdentifier):"
            func start(_ i: Int) async throws -> Daemon {
                try await workspace.startDaemon(documents: ["walk.txt"], arguments: [
                    "--redis", redis.url, "--redis-prefix", prefix, "--state-dir", workspace.url("s\(i)").path])
            }
            let ds = [try await start(0), try await start(1), try await start(2)]
            let (presenter, _) = try await ds[0].join(label: "presenter")
            let (f1, _) = try await ds[1].join(label: "f1")
            let (f2, _) = try await ds[2].join(label: "f2")

            let line = try await presenter.ok("LINE 12")
            #expect(line["line"] == "12" && line["mark"] == "-", "\(line)")
            #expect(try await presenter.expectLine(prefix: "PAGE ")["line"] == "12", "the OK, then the PAGE")
            for f in [f1, f2] {
                let event = try await f.expectLine(prefix: "PAGE ")
                #expect(event["line"] == "12" && event["mark"] == "-" && event.version == line.version, "\(event)")
            }
            // From another daemon, conditional on the version the first one made.
            let mark = try await f1.ok("MARK 14-20 IF \(line.version ?? 0)")
            #expect(mark["line"] == "12" && mark["mark"] == "14-20", "\(mark)")
            #expect(try await f1.expectLine(prefix: "PAGE ")["mark"] == "14-20")
            for f in [presenter, f2] {
                let event = try await f.expectLine(prefix: "PAGE ")
                #expect(event["line"] == "12" && event["mark"] == "14-20" && event.version == mark.version, "\(event)")
            }
            let stale = try await f2.command("LINE 3 IF \(line.version ?? 0)").header
            #expect(stale.code == 409 && stale["line"] == "12" && stale["mark"] == "14-20", "\(stale)")
            let past = try await f2.command("MARK 25-31").header
            #expect(past.code == 416 && past.raw.contains("no line 31: page 1 has 30 lines"), "\(past)")
            #expect(try await f2.ok("STATUS").version == mark.version, "the refused ones changed nothing")

            let (late, hello) = try await ds[2].join(label: "late")
            #expect(hello["line"] == "12" && hello["mark"] == "14-20", "\(hello)")
            _ = late

            // A page turn on one daemon resets the line and mark on every daemon.
            let turned = try await f2.ok("NEXT")
            #expect(turned.page == 2 && turned["line"] == "1" && turned["mark"] == "-", "\(turned)")
            for f in [presenter, f1] {
                let event = try await f.expectLine(prefix: "PAGE ")
                #expect(event.page == 2 && event["line"] == "1" && event["mark"] == "-", "\(event)")
            }
            try await presenter.ok("LINE 4")
            try await presenter.ok("MARK 2-3")

            // A daemon started now reads the shared line and mark from Redis.
            let fourth = try await start(3)
            let (_, again) = try await fourth.join(label: "fourth")
            #expect(again.page == 2 && again["line"] == "4" && again["mark"] == "2-3", "\(again)")
        }
    }
}
