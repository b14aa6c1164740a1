import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The follower page in a real headless Chromium (Debian's chromium and chromium-driver,
/// Selenium from python3-selenium): it follows a turn made with nc, ends on the room's page
/// after 20 random turns (a screenshot is kept in .build/artefacts), browses and snaps back,
/// renders a hostile markdown page with its raw HTML as text and nothing run, and resyncs after the daemon is killed and restarted.
@Suite("Follower page in Chromium", .timeLimit(.minutes(3)))
struct BrowserTests {
    static let hostile = """
        # Hostile

        <script>window.pwned = 1</script>

        A [link](javascript:window.pwned=2) and <img src=x onerror="window.pwned=3"> and <b>raw</b>.

        """

    /// Debian's python3 when Chromium, chromedriver and Selenium are all there; nil otherwise.
    static func python() -> String? {
        let python = "/usr/bin/python3"
        guard access(python, X_OK) == 0, access("/usr/bin/chromium", X_OK) == 0, access("/usr/bin/chromedriver", X_OK) == 0 else { return nil }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import selenium"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return nil }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? python : nil
    }

    /// Where the screenshot is kept: `.build/artefacts` of this checkout.
    static func artefacts() throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent(".build/artefacts", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aReaderFollowsTheRoomInChromium() async throws {
        guard let python = Self.python() else {
            cannotRunHere(skipped: "chromium, chromium-driver or python3-selenium is not installed; the follower page not checked",
                          underCI: "chromium, chromium-driver or python3-selenium is not installed (scripts/test installs them)")
            return
        }
        try await withWorkspace { workspace in
            let documents = ["deck.txt", "hostile.md", "walk.txt"]
            try workspace.write("deck.txt", Documents.formFeed(pages: 25))
            try workspace.write("walk.txt", (1...60).map { "walk line \($0)" }.joined(separator: "\n") + "\n")
            try workspace.write("hostile.md", Self.hostile)
            var daemon = try await workspace.startDaemon(documents: documents, arguments: ["--web-listen", "127.0.0.1:0"])
            let web = try await webPort(daemon)
            let tcp = daemon.port
            try workspace.write("talk.txt", Documents.formFeed(pages: 5))
            let locked = try await workspace.startDaemon(documents: ["talk.txt"], arguments: [
                "--web-listen", "127.0.0.1:0", "--token", "s3cret", "--state-dir", workspace.url("state-locked").path])
            let lockedWeb = try await webPort(locked)
            try workspace.write("browser.py", BrowserScript.source)
            let screenshot = try Self.artefacts().appendingPathComponent("follower-page.png")
            try? FileManager.default.removeItem(at: screenshot)
            let output = workspace.url("browser.out")
            let fd = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw HarnessError("open \(output.path) failed") }
            let browser = try ChildProcess(executable: python, arguments: [
                workspace.url("browser.py").path, String(web), String(tcp), "25", workspace.root.path, screenshot.path,
                String(lockedWeb), String(locked.port),
            ], outputFD: fd)
            close(fd)
            // The script asks for the restart once the page follows the room: kill -9, then a new
            // daemon on the same ports and state.
            var restarted = false
            let deadline = ContinuousClock.now + .seconds(150)
            while browser.isRunning && ContinuousClock.now < deadline {
                if !restarted && FileManager.default.fileExists(atPath: workspace.url("restart.request").path) {
                    restarted = true
                    daemon.kill9()
                    _ = try await daemon.waitForExit(timeout: .seconds(10))
                    daemon = try await workspace.startDaemon(
                        documents: documents, arguments: ["--listen", "127.0.0.1:\(tcp)", "--web-listen", "127.0.0.1:\(web)", "--idle-timeout", "2"])
                    try workspace.write("restart.done", "")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            if browser.isRunning { browser.killAndReap() }
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(browser.termination == .exited(0), "browser.py:\n\(text)")
            let result = scriptResults(text)
            #expect(result["loaded"] == "True", "the page showed page 1:\n\(text)")
            #expect(result["first_text"] == "this is page 1")
            #expect(result["position"] == "Page 1 of 25")
            let turn = Int(result["turn_ms"] ?? "") ?? .max
            #expect(turn <= 500, "a turn made with nc reached the page in \(result["turn_ms"] ?? "-") ms")
            #expect(result["turn_text"] == "this is page 2")
            #expect(result["turn_position"]?.hasPrefix("Page 2 of 25, turned by guest-") == true)
            #expect(result["after_20"]?.hasPrefix("True ") == true, "after 20 random turns: \(result["after_20"] ?? "-")")
            #expect(FileManager.default.fileExists(atPath: screenshot.path), "screenshot at \(screenshot.path)")
            #expect(result["browse_and_back"] == "True True")
            #expect(result["who_browsing"] == "True", "VIEW BROWSE reached the room: WHO shows the browser's page")
            #expect(result["who_following"] == "True", "and VIEW FOLLOW after f")
            #expect(result["hand_up"] == "True", "the hand button raised the reader's hand")
            #expect(result["hand_button"] == "Lower hand")
            #expect(result["hand_lowered"] == "True Raise hand", "HAND DOWN ALL from another member reached the page")
            #expect(result["open_turn"] == "True True", "in an open room the page's Turn button moved the room")
            #expect(result["focus"]?.hasPrefix("True ") == true, "line 30 at the top, 31-32 marked: \(result["focus"] ?? "-")")
            #expect(result["focus_position"]?.hasSuffix(" · line 30 · lines 31-32 marked") == true, "\(result["focus_position"] ?? "-")")
            #expect(result["hostile_heading"] == "Hostile", "markdown is rendered: its heading is a heading")
            #expect(result["hostile_elements"] == "0", "no element from the document's raw HTML")
            #expect(result["hostile_hrefs"] == "\"\"", "the javascript: link has no destination")
            #expect(result["hostile_ran"] == "undefined", "no script of the document ran")
            #expect(result["hostile_text"] == "True", "the markup is shown as it is written")
            #expect(result["phone"] == "true true", "390 px wide: nothing wider than the screen, type of 16 px or more")
            #expect(result["reader"] == "polite polite 1", "the page's text and position are live regions, the heading a heading")
            #expect(result["scheme"] == "True True", "light by default, dark with prefers-color-scheme: dark")
            #expect(result["reloaded"] == "True")
            #expect(restarted, "the daemon was restarted")
            #expect(result["resync"]?.hasPrefix("True ") == true, "resynced within 5 s of the restart: \(result["resync"] ?? "-")")
            #expect(result["status"]?.hasPrefix("Connected") == true)
            #expect(result["token_room"] == "True True True True True",
                    "a token room: no Turn, n turns nothing, a wrong token refused, the right one brings Turn, which moves the room")
            #expect(result["token_kept_out"] == "True", "the token is in no URL and no cookie")
            #expect(result["cookies"] == "0", "no cookies")
            #expect(result["idle_kept"]?.hasPrefix("0 Connected") == true,
                    "with --idle-timeout 2 the page kept its connection through 5 s of reading: \(result["idle_kept"] ?? "-")")
        }
    }
}
