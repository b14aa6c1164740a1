import Foundation
import Testing

/// Checks of the repository itself: what is tracked and how dependencies are pinned.
@Suite("Repository", .timeLimit(.minutes(1)))
struct RepositoryTests {
    static let root = DocumentationTests.root

    /// Runs git in the repository root and returns what it printed.
    static func git(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess("/usr/bin/git", ["-C", root.path] + arguments)
    }

    /// The `.package(url: ...)` lines of Package.swift, as (identity, the rest of the line).
    static func packageLines(_ manifest: String) -> [(identity: String, line: String)] {
        manifest.split(separator: "\n").compactMap { line in
            guard line.contains(".package(url: \""),
                  let url = line.split(separator: "\"").dropFirst().first else { return nil }
            var identity = String(url.split(separator: "/").last ?? "").lowercased()
            if identity.hasSuffix(".git") { identity.removeLast(4) }
            return (identity, String(line))
        }
    }

    /// The (identity, version) pairs of a Package.resolved file.
    static func resolvedPins(_ resolved: String) throws -> [(identity: String, version: String)] {
        struct File: Decodable {
            struct Pin: Decodable {
                struct State: Decodable { var version: String? }
                var identity: String
                var state: State
            }
            var pins: [Pin]
        }
        return try JSONDecoder().decode(File.self, from: Data(resolved.utf8)).pins.map { ($0.identity, $0.state.version ?? "-") }
    }

    @Test("Package.swift pins every package it names with exact:, SwiftPM resolves exactly those, and Package.resolved is ignored, not tracked")
    func exactPins() async throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let lines = Self.packageLines(manifest)
        #expect(lines.count >= 3, "read \(lines.map(\.identity)) from Package.swift")
        for (identity, line) in lines {
            #expect(line.contains("exact: \""), "\(identity) is not pinned with exact: in Package.swift: \(line)")
        }
        // SwiftPM resolved each of them at exactly that version (it writes Package.resolved
        // before it builds).
        let resolvedURL = Self.root.appendingPathComponent("Package.resolved")
        let pins = try Self.resolvedPins(try String(contentsOf: resolvedURL, encoding: .utf8))
        for (identity, line) in lines {
            let pin = pins.first { $0.identity == identity }
            #expect(pin.map { line.contains("exact: \"\($0.version)\"") } == true,
                    "\(identity) resolved at \(pin?.version ?? "nothing"), not what Package.swift pins: \(line)")
        }

        let tracked = try await Self.git(["ls-files", "--", "Package.resolved"])
        #expect(tracked.status == 0 && tracked.output.isEmpty, "Package.resolved is tracked: \(tracked.output)")
        // The project's own .gitignore (a machine may ignore the file in its global git config too).
        let gitignore = try String(contentsOf: Self.root.appendingPathComponent(".gitignore"), encoding: .utf8)
        #expect(gitignore.split(separator: "\n").contains { $0 == "Package.resolved" || $0 == "/Package.resolved" },
                "Package.resolved is not in .gitignore")
    }

    /// Words that name who worked when, where a commit id or a measurement belongs: a numbered
    /// session, "sit" + "ting" (a stretch of work at one go), a numbered helper or worker, "other
    /// helpers". Built from pieces so that this file does not match itself. Code's own words (a
    /// client's session, the bench's worker processes, parsing helpers) do not match.
    static var whoWorkedWhen: Regex<AnyRegexOutput> {
        let stretch = "sit" + "tings?"
        let pattern = #"(?i)\bsessions? [0-9]+|\b"# + stretch + #"\b|\b(help|work)er-?[0-9]+\b|\bother help"# + "ers\\b"
        return try! Regex(pattern)
    }

    /// The lines of `text` that name who worked when, as `path:line: text`.
    static func namesOfWhoWorkedWhen(in text: String, path: String) -> [String] {
        let pattern = whoWorkedWhen
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            line.contains(pattern) ? "\(path):\(number + 1): \(line.prefix(160))" : nil
        }
    }

    @Test("the pattern finds planted names of who worked when, and not the code's own words")
    func whoWorkedWhenPattern() {
        let planted = ["measured in Sess" + "ion 21's run", "sess" + "ions 16 to 19", "in one sit" + "ting", "the same sit" + "tings",
                       "helper" + "-9's audit", "Work" + "er3 built it", "beside other help" + "ers building"]
        for line in planted {
            #expect(Self.namesOfWhoWorkedWhen(in: "x\n" + line, path: "f").count == 1, "not found: \(line)")
        }
        let legit = ["a closed session's outbox", "Session(id: 3)", "the bench's worker processes", "--workers 2",
                     "Small parsing helpers", "where presses lead", "PAGE events in a session", "helpers.swift"]
        for line in legit {
            #expect(Self.namesOfWhoWorkedWhen(in: line, path: "f").isEmpty, "a false hit: \(line)")
        }
    }

    @Test("no tracked file names who worked when (a numbered session or helper, and the like) where a commit id belongs")
    func noNamesOfWhoWorkedWhen() async throws {
        let listed = try await Self.git(["ls-files", "-z"])
        #expect(listed.status == 0, "\(listed.output)")
        let paths = listed.output.split(separator: "\0").map(String.init)
        #expect(paths.count > 100, "git ls-files listed \(paths.count) files")
        var hits: [String] = []
        for path in paths {
            // Text files only: fuzzing corpora and the like are bytes.
            guard let data = FileManager.default.contents(atPath: Self.root.appendingPathComponent(path).path),
                  !data.contains(0), let text = String(data: data, encoding: .utf8) else { continue }
            hits += Self.namesOfWhoWorkedWhen(in: text, path: path)
        }
        #expect(hits.isEmpty, "name commits and measurements instead:\n\(hits.joined(separator: "\n"))")
    }
}
