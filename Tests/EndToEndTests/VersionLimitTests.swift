import Foundation
import Testing

/// Versions never repeat: at 2^64−1 a room refuses changes instead of reusing the version.
@Suite("Version limit", .timeLimit(.minutes(1)))
struct VersionLimitTests {
    @Test("a room at the largest version refuses every change with ERR 500 and keeps its page")
    func changesAtTheLargestVersionAreRefused() async throws {
        try await withWorkspace { workspace in
            try workspace.write("notes.txt", Documents.formFeed(pages: 4))
            // Saved without a doc id: the daemon counts the document as changed and adds one.
            try workspace.write("state/notes.state", "pagesync-state 1\npage=1\nversion=18446744073709551613\n")
            let daemon = try await workspace.startDaemon(documents: ["notes.txt"])
            let (client, hello) = try await daemon.join()
            #expect(hello.version == UInt64.max - 1, "\(hello)")
            let last = try await client.ok("NEXT")
            #expect(last.page == 2 && last.version == UInt64.max, "\(last)")
            for command in ["NEXT", "PREV", "FIRST", "LAST", "GOTO 4", "NEXT IF 18446744073709551615"] {
                let refused = try await client.command(command).header
                #expect(refused.code == 500, "\(command): \(refused)")
                #expect(refused.raw.contains("version limit reached"), "\(refused)")
                #expect(refused.page == 2 && refused.version == UInt64.max, "the state follows: \(refused)")
            }
            #expect(try await client.ok("GOTO 2").version == UInt64.max, "staying put is still OK")
            let status = try await client.ok("STATUS")
            #expect(status.page == 2 && status.version == UInt64.max)
        }
    }
}
