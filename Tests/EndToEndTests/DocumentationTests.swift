import Foundation
import Testing
import TestSupport

/// The sessions printed in PROTOCOL.md and README.md, replayed against the real daemon line by line:
/// the documentation matches the code, byte for byte.
@Suite("Documented sessions", .timeLimit(.minutes(1)))
struct DocumentationTests {
    /// The repository root, found from this file's path (Tests/EndToEndTests/<file>).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced code blocks of `markdown` after the heading `heading`, up to the next `## ` heading.
    static func codeBlocks(in markdown: String, after heading: String) throws -> [[String]] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: heading) else { throw HarnessError("no heading \(heading.debugDescription)") }
        var blocks: [[String]] = []
        var current: [String]?
        for line in lines[(start + 1)...] {
            if current == nil && line.hasPrefix("## ") { break }
            if line.hasPrefix("```") {
                if let block = current { blocks.append(block); current = nil } else { current = [] }
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The argument of `printf '...'` with its escapes (\n, \r) applied.
    static func printfArgument(_ command: String) throws -> String {
        guard let open = command.firstIndex(of: "'"),
              let close = command[command.index(after: open)...].firstIndex(of: "'") else {
            throw HarnessError("no printf '...' in \(command)")
        }
        return String(command[command.index(after: open)..<close])
            .replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\r", with: "\r")
    }

    /// Starts the daemon with the sample configuration from Config/, on a free port.
    static func sampleDaemon(_ workspace: Workspace) async throws -> Daemon {
        try await workspace.startDaemon(arguments: [
            "--config", root.appendingPathComponent("Config/pagesyncd.yaml").path,
            "--listen", "127.0.0.1:0", "--state-dir", workspace.stateDir.path,
        ])
    }

    @Test("PROTOCOL.md: the netcat session for every command, then the HTTP and script examples")
    func protocolSessions() async throws {
        let markdown = try String(contentsOf: Self.root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let blocks = try Self.codeBlocks(in: markdown, after: "## A netcat session for every command")
        #expect(blocks.count >= 3)
        try await withWorkspace { workspace in
            let daemon = try await Self.sampleDaemon(workspace)
            for block in blocks {
                let command = try #require(block.first, "empty block")
                if command == "$ nc 127.0.0.1 7777" {
                    try await replayInteractive(Array(block.dropFirst()), daemon: daemon)
                } else if command.hasPrefix("$ printf ") {
                    try await replayScript(command: String(command.dropFirst(2)), expected: Array(block.dropFirst()), daemon: daemon)
                } else {
                    Issue.record("unrecognized example: \(command)")
                }
            }
        }
    }

    @Test("PROTOCOL.md: the TEXT FROM example (nc, on the built-in guide) and the TLS example (openssl s_client)")
    func protocolExamplesOutsideTheSession() async throws {
        let markdown = try String(contentsOf: Self.root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let textFrom = try #require(try Self.codeBlocks(in: markdown, after: "### `TEXT <n> FROM <offset>`: a long page in pieces")
            .first { $0.first == "$ nc 127.0.0.1 7777" })
        try await withWorkspace { workspace in
            let daemon = try await workspace.startDaemon()
            try await replayInteractive(Array(textFrom.dropFirst()), daemon: daemon)
        }

        let tls = try #require(try Self.codeBlocks(in: markdown, after: "## TLS").first)
        let command = try #require(tls.first?.dropFirst(2)).description
        #expect(command.contains("-connect 127.0.0.1:7778 -CAfile ca.pem"), "\(command)")
        let certs = try TestCertificates()
        defer { certs.remove() }
        try await withWorkspace { workspace in
            try workspace.write("d.txt", Documents.formFeed(pages: 4))
            let daemon = try await workspace.startDaemon(documents: ["d.txt"], arguments: [
                "--tls-listen", "127.0.0.1:0", "--tls-cert", certs.certificateFile, "--tls-key", certs.keyFile,
            ])
            let port = try await tlsPort(daemon)
            let script = command
                .replacingOccurrences(of: "127.0.0.1:7778", with: "127.0.0.1:\(port)")
                .replacingOccurrences(of: "-CAfile ca.pem", with: "-CAfile \(shellQuoted(certs.caFile))")
            let result = try await runProcess("/bin/sh", ["-c", script])
            #expect(result.status == 0, "\(script): \(result.output)")
            let got = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(got.map(Self.normalized) == tls.dropFirst().map(Self.normalized), "\(script)")
        }
    }

    @Test("README.md: printf 'next\\n' | nc -q1 on the built-in default prints what the README shows")
    func readmeScript() async throws {
        let markdown = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = try Self.codeBlocks(in: markdown, after: "## Two commands")
        let index = try #require(blocks.firstIndex { $0 == ["printf 'next\\n' | nc -q1 127.0.0.1 7777"] })
        #expect(blocks[0] == ["scripts/run-daemon"], "the README's first command starts the daemon")
        #expect(blocks.contains(["scripts/test"]), "the README's test command is scripts/test (.ci/run runs it)")
        let expected = try #require(index + 1 < blocks.count ? blocks[index + 1] : nil)
        try await withWorkspace { workspace in
            // scripts/run-daemon with no arguments: the built-in default, here on a free port.
            let daemon = try await workspace.startDaemon()
            try await replayScript(command: blocks[index][0], expected: expected, daemon: daemon)
        }
    }

    /// scripts/lib/common.sh's package lists by name (`PAGESYNC_BUILD_PACKAGES=(...)` and the like).
    static func packageLists() throws -> [String: [String]] {
        let common = try String(contentsOf: root.appendingPathComponent("scripts/lib/common.sh"), encoding: .utf8)
        var lists: [String: [String]] = [:]
        for line in common.split(separator: "\n") where line.hasPrefix("PAGESYNC_") && line.contains("_PACKAGES=(") {
            let name = String(line.prefix { $0 != "=" })
            lists[name] = line.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }.split(separator: " ").map(String.init)
        }
        return lists
    }

    /// The packages `script` installs: the lists its `pagesync_install` call names (`"${PAGESYNC_X_PACKAGES[@]}"`).
    static func packagesInstalled(by script: String, lists: [String: [String]]) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(script), encoding: .utf8)
        // The call, with its continuation lines.
        let call = try #require(text.components(separatedBy: "pagesync_install ").dropFirst().first?
            .components(separatedBy: "\n").reduce(into: [String]()) { lines, line in
                if lines.isEmpty || lines.last!.hasSuffix("\\") { lines.append(line) }
            }.joined(separator: "\n"), "\(script) calls no pagesync_install")
        let names = call.matches(of: /\$\{(PAGESYNC_[A-Z]+_PACKAGES)\[@\]\}/).map { String($0.1) }
        #expect(!names.isEmpty, "\(script): \(call)")
        return try names.flatMap { name in try #require(lists[name], "\(script) installs \(name), which common.sh does not define") }
    }

    @Test("README.md's two commands name every Debian package each script installs, and scripts/run-daemon installs what the README's next step runs (nc)")
    func readmeNamesThePackages() throws {
        let markdown = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(markdown.components(separatedBy: "## Two commands").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let lists = try Self.packageLists()
        #expect(lists.values.joined().count >= 10, "read \(lists) from scripts/lib/common.sh")
        let runDaemon = try Self.packagesInstalled(by: "scripts/run-daemon", lists: lists)
        let test = try Self.packagesInstalled(by: "scripts/test", lists: lists)
        #expect(Set(lists.values.joined()).isSubset(of: test), "scripts/test installs every list")
        // What README says before the `scripts/run-daemon` block is what scripts/run-daemon installs.
        let beforeRunDaemon = try #require(section.components(separatedBy: "```sh\nscripts/run-daemon\n```").first)
        let unnamed = runDaemon.filter { !beforeRunDaemon.contains("`\($0)`") }
        #expect(unnamed.isEmpty, "README.md says scripts/run-daemon installs less than it does")
        let unnamedByTest = test.filter { !section.contains("`\($0)`") }
        #expect(unnamedByTest.isEmpty, "README.md's \"Two commands\" does not name what scripts/test installs")
        // The next step after the daemon starts, on a fresh machine: its tools come with scripts/run-daemon.
        let blocks = try Self.codeBlocks(in: markdown, after: "## Two commands")
        let nextSteps = blocks.prefix { $0 != ["scripts/test"] }.dropFirst().joined()
        #expect(nextSteps.contains { $0.contains("| nc ") }, "the README's next step uses nc: \(nextSteps)")
        if nextSteps.contains(where: { $0.contains("| nc ") }) {
            #expect(runDaemon.contains("netcat-openbsd"), "scripts/run-daemon does not install nc, which the README's next step runs")
        }
    }

    /// Types each `> ` line into one connection and compares what comes back with the lines below it.
    private func replayInteractive(_ transcript: [String], daemon: Daemon) async throws {
        let client = try await daemon.connect(label: "nc")
        var pending: [String] = []
        var sent: String?
        func check() async throws {
            var got: [String] = []
            for _ in pending { got.append(try await client.readLine()) }
            #expect(got.map(Self.normalized) == pending.map(Self.normalized), "after \(sent.map { "> " + $0 } ?? "connecting")")
            pending = []
        }
        for line in transcript {
            if line.hasPrefix("> ") {
                try await check()
                sent = String(line.dropFirst(2))
                try await client.send(sent!)
            } else {
                pending.append(line)
            }
        }
        try await check()
        if sent?.lowercased() == "quit" { try await client.expectClosed() }
    }

    /// Runs a `printf '...' | nc -q1 127.0.0.1 7777` example with the real nc on the daemon's port.
    private func replayScript(command: String, expected: [String], daemon: Daemon) async throws {
        let script = command.replacingOccurrences(of: "127.0.0.1 7777", with: "127.0.0.1 \(daemon.port)")
        #expect(script != command, "the example does not use 127.0.0.1 7777")
        let result = try await runProcess("/bin/sh", ["-c", script])
        #expect(result.status == 0, "\(command): \(result.output)")
        let got = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(got.map(Self.normalized) == expected.map(Self.normalized), "\(command)")
    }

    /// A file's `doc=` id is a hash of its content, which the examples do not spell out, and
    /// epochs are random: compare everything else exactly.
    static func normalized(_ line: String) -> String {
        line.split(separator: " ", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("doc=") ? "doc=<id>" : $0.hasPrefix("epoch=") ? "epoch=<epoch>" : String($0) }
            .joined(separator: " ")
    }
}
