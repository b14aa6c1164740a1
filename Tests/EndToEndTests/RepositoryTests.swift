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
}
