import Foundation
import PageSyncCore
import Testing

/// What a user reads before anything runs: `--help` of both binaries, the generated man pages
/// rendered by `man`, and `scripts/run-daemon --help`.
@Suite("Help and manual pages", .timeLimit(.minutes(1)))
struct HelpAndManualTests {
    /// The entries under ARGUMENTS: and OPTIONS: of argument-parser help text, keyed by their first
    /// word (`--state-dir`, `<files>`), with continuation lines joined.
    static func entries(of help: String) -> [String: String] {
        var result: [String: String] = [:]
        var current: String?
        var inSection = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasSuffix(":") && !line.hasPrefix(" ") {
                inSection = line == "ARGUMENTS:" || line == "OPTIONS:"
                current = nil
                continue
            }
            guard inSection, !line.isEmpty else { continue }
            if line.hasPrefix("  ") && !line.hasPrefix("   ") {
                let key = String(line.dropFirst(2).prefix { $0 != " " && $0 != "," })
                current = key
                result[key] = line
            } else if let key = current {
                result[key]! += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return result
    }

    /// How often `word` occurs in `text`.
    static func count(_ word: String, in text: String) -> Int {
        text.lowercased().components(separatedBy: word).count - 1
    }

    static func help(of binary: String) async throws -> [String: String] {
        let result = try await runProcess(binary, ["--help"])
        #expect(result.status == 0, "\(result.output)")
        let entries = Self.entries(of: result.output)
        #expect(entries.count >= 4, "no options found in:\n\(result.output)")
        return entries
    }

    @Test("pagesyncd --help: each default stated, and stated once")
    func daemonHelp() async throws {
        let entries = try await Self.help(of: Binaries.pagesyncd())
        for (key, text) in entries {
            #expect(Self.count("default", in: text) <= 1, "\(key) states its default twice: \(text)")
        }
        for key in ["--listen", "--state-dir", "--max-clients", "--max-line", "--split", "--log-level", "--durability"] {
            let text = try #require(entries[key], "no \(key) in --help")
            #expect(Self.count("default", in: text) == 1, "\(key) does not state its default: \(text)")
        }
        #expect(entries["--state-dir"]?.contains("~/.local/state/pagesync") == true)
        #expect(entries["--log-level"]?.contains("info") == true)
    }

    @Test("pagesync --help: each default stated, and stated once")
    func pagerHelp() async throws {
        let entries = try await Self.help(of: Binaries.path(of: "pagesync"))
        for (key, text) in entries {
            #expect(Self.count("default", in: text) <= 1, "\(key) states its default twice: \(text)")
        }
        for key in ["<HOST:PORT>", "--room"] {
            let text = try #require(entries[key], "no \(key) in --help")
            #expect(Self.count("default", in: text) == 1, "\(key) does not state its default: \(text)")
        }
    }

    @Test("pagesync --help: the key table fits 80 columns, so no row of it wraps into the next")
    func pagerHelpKeyTable() async throws {
        let result = try await runProcess(Binaries.path(of: "pagesync"), ["--help"])
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Keys (") }, "no key table in:\n\(result.output)")
        let table = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(table.count >= 10, "\(table)")
        for row in table {
            #expect(row.hasPrefix("  "), "a key-table row wrapped: '\(row)'")  // every row starts indented
        }
    }

    @Test("--version of both binaries prints PageSyncVersion.current, which `make deb` names the package after",
          arguments: ["pagesyncd", "pagesync"])
    func version(program: String) async throws {
        let binary = program == "pagesyncd" ? try Binaries.pagesyncd() : try Binaries.path(of: program)
        let result = try await runProcess(binary, ["--version"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == PageSyncVersion.current, "\(result.output)")
    }

    /// The pages `make man` generates, which `make install` installs (scripts/test runs `make man`).
    static func manualPage(_ name: String) -> URL? {
        let url = SystemdE2E.packageRoot.appendingPathComponent(".build/man/\(name)")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// Generated page `page` as `man --warnings` renders it at 100 columns, overstrike removed; nil
    /// (the test skipped) when `make man` has not run. Expects no warning.
    static func renderedManual(_ page: String) throws -> String? {
        guard let url = Self.manualPage(page) else {
            cannotRunHere(skipped: "no .build/man/\(page); run `make man` first", underCI: "no .build/man/\(page): scripts/test runs `make man`")
            return nil
        }
        let man = try #require(SystemdE2E.which("man"), "man is not installed (scripts/test installs man-db)")
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "100"
        environment["MAN_KEEP_FORMATTING"] = nil
        let result = try SystemdE2E.run(man, ["--warnings", "-E", "UTF-8", "-l", url.path], environment: environment)
        #expect(result.status == 0, "man -l \(page) failed: \(result.stderr)")
        #expect(result.stderr.isEmpty, "man --warnings -l \(page):\n\(result.stderr)")
        return result.stdout.replacingOccurrences(of: "\u{8}.", with: "")
    }

    @Test("man --warnings renders each generated page without a warning, with a true synopsis",
          arguments: [("pagesyncd.8", "pagesyncd"), ("pagesync.1", "pagesync")])
    func manualPages(page: String, program: String) async throws {
        guard let rendered = try Self.renderedManual(page) else { return }
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "SYNOPSIS"), "no SYNOPSIS in:\n\(rendered)")
        let synopsis = lines[(start + 1)...].prefix { !$0.isEmpty }.joined(separator: " ")
        #expect(synopsis.trimmingCharacters(in: .whitespaces).hasPrefix(program + " "), "synopsis: \(synopsis)")
        #expect(!synopsis.contains("subcommand"), "\(program) has no subcommands; synopsis: \(synopsis)")
        #expect(synopsis.contains("[--token"), "synopsis: \(synopsis)")

        // Every option of --help is in the page.
        let binary = program == "pagesyncd" ? try Binaries.pagesyncd() : try Binaries.path(of: program)
        for key in try await Self.help(of: binary).keys where key.hasPrefix("--") && key != "--help" {
            #expect(rendered.contains(key), "\(page) does not describe \(key)")
        }
    }

    @Test("--help is ASCII, so the man page generator (which drops every other character) keeps every key",
          arguments: ["pagesyncd", "pagesync"])
    func helpIsASCII(program: String) async throws {
        let binary = program == "pagesyncd" ? try Binaries.pagesyncd() : try Binaries.path(of: program)
        let result = try await runProcess(binary, ["--help"])
        #expect(result.status == 0, "\(result.output)")
        for line in result.output.split(separator: "\n") where !line.unicodeScalars.allSatisfy(\.isASCII) {
            Issue.record("\(program) --help: a character generate-manual drops: \(line)")
        }
    }

    @Test("pagesync(1) names its arrow keys and has an ENVIRONMENT section for PAGESYNC_SERVER and PAGESYNC_TOKEN")
    func pagerManualKeysAndEnvironment() async throws {
        guard let rendered = try Self.renderedManual("pagesync.1") else { return }
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains { $0.contains("j k Down Up") }, "\(rendered)")
        #expect(lines.contains { $0.contains("Left Right") && $0.contains("sideways") }, "\(rendered)")
        let start = try #require(lines.firstIndex(of: "ENVIRONMENT"), "no ENVIRONMENT in:\n\(rendered)")
        let section = lines[(start + 1)...].prefix { $0.isEmpty || $0.hasPrefix(" ") }.joined(separator: "\n")
        for variable in ["PAGESYNC_SERVER", "PAGESYNC_TOKEN", "NO_COLOR", "TERM"] {
            #expect(section.contains(variable), "ENVIRONMENT does not name \(variable):\n\(section)")
        }
    }

    @Test("scripts/run-daemon --help says what it does, without building or starting anything")
    func runDaemonHelp() async throws {
        let script = SystemdE2E.packageRoot.appendingPathComponent("scripts/run-daemon").path
        let result = try await runProcess(script, ["--help"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasPrefix("scripts/run-daemon [pagesyncd arguments...]"), "\(result.output)")
        #expect(result.output.contains("Any other arguments go to pagesyncd unchanged"))
        #expect(result.output.contains("--state-dir"))
        #expect(!result.output.contains("#"), "comment markers left in:\n\(result.output)")
        #expect(!result.output.contains("Compiling") && !result.output.contains("Building"), "\(result.output)")
    }
}
