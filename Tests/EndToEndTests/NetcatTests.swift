import Testing

/// The README's promise: a person or a shell script with plain `nc` can drive the daemon.
@Suite("Scripted nc sessions", .timeLimit(.minutes(1)))
struct NetcatTests {
    @Test("printf 'next\\n' | nc -q1 127.0.0.1 PORT prints HELLO, OK and PAGE")
    func scriptedNetcatSession() async throws {
        try await withDaemon(["guide.txt": Documents.formFeed(pages: 6)]) { daemon, _ in
            let (watcher, _) = try await daemon.join(label: "watcher")
            let script = "printf 'next\\n' | nc -q1 127.0.0.1 \(daemon.port)"
            let first = try await runProcess("/bin/sh", ["-c", script])
            #expect(first.status == 0, "\(first.output)")
            let lines = first.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.count == 4 && lines.last == "", "three lines: \(lines)")
            let hello = ServerLine(lines[0])
            #expect(hello.kind == "HELLO" && hello.words.first == "pagesync/1" && hello["room"] == "guide")
            #expect(hello.page == 1 && hello.pages == 6 && hello.version == 0)
            #expect(lines.count > 1 && lines[1] == "OK page=2 pages=6 version=1 line=1 mark=-")
            let page = ServerLine(lines.count > 2 ? lines[2] : "")
            #expect(page.kind == "PAGE" && page["room"] == "guide" && page.page == 2 && page.version == 1)
            #expect(page["by"] == hello["name"], "by= names the nc client")
            #expect(try await watcher.readServerLine().raw == page.raw, "the watcher saw the same PAGE line")

            let second = try await runProcess("/bin/sh", ["-c", "printf 'status\\ntext\\nquit\\n' | nc -q1 127.0.0.1 \(daemon.port)"])
            let output = second.output.split(separator: "\n").map(String.init)
            #expect(output.first.map { ServerLine($0).page } == 2, "\(output)")
            #expect(output.count > 1 && output[1].hasPrefix("OK room=guide page=2 pages=6 version=1 "), "\(output)")
            #expect(Array(output.dropFirst(2)) == ["OK TEXT page=2 pages=6 doc=\(hello["doc"] ?? "") bytes=15 lines=1 truncated=no firstline=3", "this is page 2", ".", "OK BYE"])
        }
    }
}
