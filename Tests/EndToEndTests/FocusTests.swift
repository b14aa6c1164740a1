import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A page of `count` lines reading "line 1" to "line <count>".
private func page(lines count: Int, tag: String = "") -> String {
    (1...count).map { "\(tag)line \($0)\n" }.joined()
}

/// LINE and MARK against the real daemon over real sockets: the room's focus within its page.
@Suite("The room's line and mark", .timeLimit(.minutes(2)))
struct FocusTests {
    @Test("LINE and MARK change the room's focus: the OK, every member's PAGE, STATUS and a newcomer's HELLO carry line= and mark=; a page turn resets them")
    func lineAndMarkReachEveryone() async throws {
        try await withDaemon(["walk.txt": page(lines: 30) + "\u{0C}\n" + page(lines: 5, tag: "two ")]) { daemon, _ in
            let (presenter, hello) = try await daemon.join(label: "presenter")
            #expect(hello["line"] == "1" && hello["mark"] == "-", "\(hello)")
            let (follower, _) = try await daemon.join(label: "follower")

            let line = try await presenter.ok("LINE 12")
            #expect(line.raw == "OK page=1 pages=2 version=1 line=12 mark=-")
            let lineEvent = try await follower.readServerLine()
            #expect(lineEvent.kind == "PAGE" && lineEvent["line"] == "12" && lineEvent["mark"] == "-" && lineEvent.version == 1, "\(lineEvent)")

            #expect(try await presenter.ok("MARK 14-20").raw == "OK page=1 pages=2 version=2 line=12 mark=14-20")
            let markEvent = try await follower.readServerLine()
            #expect(markEvent["line"] == "12" && markEvent["mark"] == "14-20" && markEvent.version == 2, "\(markEvent)")
            #expect(try await presenter.ok("MARK 30").raw == "OK page=1 pages=2 version=3 line=12 mark=30", "one line, the page's last")
            #expect(try await follower.readServerLine()["mark"] == "30")

            let status = try await follower.ok("STATUS")
            #expect(status["line"] == "12" && status["mark"] == "30" && status.version == 3, "\(status)")
            let (_, late) = try await daemon.join(label: "late")
            #expect(late["line"] == "12" && late["mark"] == "30", "\(late)")

            // The same line or mark again changes nothing and is not an error.
            #expect(try await presenter.ok("LINE 12").raw == "OK page=1 pages=2 version=3 line=12 mark=30")
            #expect(try await presenter.ok("MARK - IF 3").raw == "OK page=1 pages=2 version=4 line=12 mark=-")
            #expect(try await follower.readServerLine()["mark"] == "-")

            let turned = try await presenter.ok("NEXT")
            #expect(turned.raw == "OK page=2 pages=2 version=5 line=1 mark=-", "a page turn starts the page at its top, unmarked")
            let turnEvent = try await follower.readServerLine()
            #expect(turnEvent.page == 2 && turnEvent["line"] == "1" && turnEvent["mark"] == "-", "\(turnEvent)")
            #expect(try await presenter.ok("LINE 5 IF 5").raw == "OK page=2 pages=2 version=6 line=5 mark=-")
        }
    }

    @Test("bad LINE and MARK each get one documented ERR and change nothing", arguments: [
        ("LINE 0", 400, "lines start at 1"),
        ("LINE -3", 400, "is not a line number"),
        ("LINE 99999999999999999999", 400, "number too large"),
        ("LINE 31", 416, "no line 31: page 1 has 30 lines"),
        ("MARK 9-3", 400, "goes backwards"),
        ("MARK 3-", 400, "is not a range of lines"),
        ("MARK 25-31", 416, "no line 31: page 1 has 30 lines"),
        ("MARK 31", 416, "no line 31: page 1 has 30 lines"),
        ("LINE 5 IF 1", 409, "version is 2, not 1"),
        ("MARK 3-4 IF 1", 409, "version is 2, not 1"),
        ("LINE", 400, "LINE needs a line number"),
        ("MARK", 400, "MARK needs lines"),
    ])
    func badInput(line: String, code: Int, message: String) async throws {
        try await withDaemon(["walk.txt": page(lines: 30)]) { daemon, _ in
            let (client, _) = try await daemon.join()
            try await client.ok("LINE 12")
            try await client.ok("MARK 14-20")
            let refused = try await client.command(line).header
            #expect(refused.code == code && refused.raw.contains(message), "\(line): \(refused)")
            let status = try await client.ok("STATUS")
            #expect(status.version == 2 && status["line"] == "12" && status["mark"] == "14-20", "\(line) changed the room: \(status)")
        }
    }

    @Test("in a presenter room LINE and MARK need control (ERR 403), as page turns do")
    func presenterRoomNeedsControl() async throws {
        try await withDaemon(["walk.txt": page(lines: 30)], arguments: ["--token", "s3cret"]) { daemon, _ in
            let (presenter, _) = try await daemon.join(label: "presenter")
            let (follower, _) = try await daemon.join(label: "follower")
            for line in ["LINE 4", "MARK 2-3", "MARK -"] {
                let denied = try await follower.command(line).header
                #expect(denied.code == 403, "\(line): \(denied)")
            }
            try await presenter.ok("AUTH s3cret")
            #expect(try await presenter.ok("LINE 4")["line"] == "4")
            #expect(try await follower.readServerLine()["line"] == "4")
            #expect(try await follower.ok("STATUS").version == 1, "the refused ones changed nothing")
        }
    }

    @Test("the line and mark survive a restart (journal), and a reload that shortens the page clamps them and says so")
    func restartAndReload() async throws {
        try await withWorkspace { workspace in
            try workspace.write("walk.txt", page(lines: 30) + "\u{0C}\n" + page(lines: 5))
            let first = try await workspace.startDaemon(documents: ["walk.txt"])
            let (client, _) = try await first.join()
            try await client.ok("LINE 25")
            try await client.ok("MARK 8-28")
            first.send(signal: SIGTERM)
            _ = try await first.waitForExit(timeout: .seconds(10))

            let second = try await workspace.startDaemon(documents: ["walk.txt"])
            let (again, hello) = try await second.join()
            #expect(hello.version == 2 && hello["line"] == "25" && hello["mark"] == "8-28", "\(hello)")

            try workspace.write("walk.txt", page(lines: 20) + "\u{0C}\n" + page(lines: 5))
            second.send(signal: SIGHUP)
            var event = try await again.readServerLine()
            while event["line"] == "25" { event = try await again.readServerLine() }
            #expect(event.kind == "PAGE" && event.page == 1 && event["line"] == "20" && event["mark"] == "8-20", "\(event)")
            #expect(second.stderr.contains("line 25 -> 20, mark 8-28 -> 8-20"), "\(second.stderr)")
        }
    }
}
