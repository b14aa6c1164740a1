import Foundation
import Testing

/// The room's line and mark in real pagers (tmux terminals) against the real daemon: a presenter
/// leads, two followers (one without colour) keep the presenter's top line on their first row
/// and show the mark, over a seeded random walk of scrolls and marks.
@Suite("Focus within a page (tmux)", .timeLimit(.minutes(3)))
struct FocusTmuxTests {
    static let lineCount = 200
    /// Line n reads `L<nnn> ...`, so a screen's first row names its line.
    static let document = (1...lineCount).map { "L" + String(format: "%03d", $0) + " of the walk-through" }.joined(separator: "\n") + "\n"
    static let rows = 12  // 11 of page, the status line
    static var maxTop: Int { lineCount - (rows - 1) + 1 }

    /// The line number the first row of `screen` shows (after a `> ` or blank gutter).
    static func topLine(_ screen: String) -> Int? {
        guard let first = screen.split(separator: "\n", omittingEmptySubsequences: false).first else { return nil }
        let text = first.drop { $0 == " " || $0 == ">" }
        guard text.hasPrefix("L") else { return nil }
        return Int(text.dropFirst().prefix(3))
    }

    /// For each row of `capture-pane -e -p` output, whether its first character is in reverse
    /// video. tmux writes an attribute only where it changes, so the state carries from row to row.
    static func reversedRows(_ screen: String) -> [Bool] {
        var reverse = false
        var result: [Bool] = []
        for row in screen.split(separator: "\n", omittingEmptySubsequences: false) {
            var first: Bool?
            var i = row.startIndex
            while i < row.endIndex {
                if row[i] == "\u{1B}", row[row.index(after: i)...].hasPrefix("["),
                   let m = row[i...].firstIndex(where: { $0 == "m" }) {
                    let params = row[row.index(i, offsetBy: 2)..<m].split(separator: ";", omittingEmptySubsequences: false)
                    for p in params {
                        if p == "7" { reverse = true } else if p == "0" || p == "" || p == "27" { reverse = false }
                    }
                    i = row.index(after: m)
                    continue
                }
                if first == nil { first = reverse }
                i = row.index(after: i)
            }
            result.append(first ?? reverse)
        }
        return result
    }

    /// A small seeded generator (SplitMix64), so a failing walk can be replayed.
    struct Walk {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }

    @Test("50 random scrolls and marks: both followers show the presenter's top line on their first row, the mark in reverse video or behind >")
    func followersKeepThePresentersLine() async throws {
        try await withDaemon(["walk.txt": Self.document], arguments: ["--token", "s3cret"]) { daemon, workspace in
            try workspace.write("token", "s3cret\n")
            let token = workspace.root.appendingPathComponent("token").path
            try await withTmux(workspace) { tmux in
                for (name, args, env) in [("presenter", ["--name", "ann", "--token-file", token], ""),
                                          ("colour", ["--name", "bob"], "env -u NO_COLOR "), ("plain", ["--name", "cid"], "NO_COLOR=1 ")] {
                    try await tmux.openTerminal(name, columns: 70, rows: Self.rows)
                    try await tmux.type(name, env + (try pagerCommand(daemon, args)), enter: true)
                    try await tmux.waitFor(name, showing: "L001 of the walk-through", "page 1/1")
                }
                try await tmux.waitFor("presenter", showing: "leading")

                var walk = Walk(state: 38)
                var top = 1
                var mark: ClosedRange<Int>?
                var latencies: [Duration] = []
                for step in 1...50 {
                    let count = 1 + walk.next(9)
                    let keys: String
                    switch walk.next(10) {
                    case 0...2: keys = "\(count)j"; top += count
                    case 3...4: keys = "\(count)k"; top -= count
                    case 5: keys = "d"; top += (Self.rows - 1) / 2
                    case 6: keys = "u"; top -= (Self.rows - 1) / 2
                    case 7: let line = 1 + walk.next(Self.lineCount); keys = "\(line)g"; top = line
                    case 8:
                        keys = "\(count)x"
                        let clampedTop = min(max(1, top), Self.maxTop)
                        if let m = mark, m.lowerBound == clampedTop { mark = m.lowerBound...min(Self.lineCount, m.upperBound + count) }
                        else { mark = clampedTop...min(Self.lineCount, clampedTop + count - 1) }
                    default: keys = "X"; if mark == nil { continue }; mark = nil
                    }
                    top = min(max(1, top), Self.maxTop)
                    let start = ContinuousClock.now
                    try await tmux.type("presenter", keys)
                    let expected = top
                    for follower in ["colour", "plain"] {
                        try await tmux.waitFor(follower, "line \(expected) on its first row (step \(step): \(keys))") {
                            Self.topLine($0) == expected
                        }
                    }
                    latencies.append(ContinuousClock.now - start)
                    #expect(Self.topLine(try await tmux.screen("presenter")) == expected, "step \(step): the presenter's own screen")
                    guard keys.hasSuffix("x") || keys == "X" else { continue }
                    // The mark: reverse video on the colour terminal, a > gutter on the plain one.
                    let shown = expected...(expected + Self.rows - 2)
                    let markedShown = mark.map { Set($0).intersection(Set(shown)) } ?? []
                    try await tmux.waitFor("plain", "the > gutter on \(markedShown.sorted()) (step \(step))") { screen in
                        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).prefix(Self.rows - 1)
                        return rows.enumerated().allSatisfy { i, row in
                            markedShown.contains(expected + i) ? row.hasPrefix("> L") : !row.hasPrefix(">")
                        }
                    }
                    let escapes = try await tmux.screenWithEscapes("colour")
                    let reversed = Self.reversedRows(escapes).prefix(Self.rows - 1)
                    for (i, isReversed) in reversed.enumerated() {
                        #expect(isReversed == markedShown.contains(expected + i), "step \(step), row \(i + 1):\n\(escapes.debugDescription)")
                    }
                }
                let sorted = latencies.sorted()
                let lines = try await NotesViewTmuxTests.commandCount(daemon, "line")
                let marks = try await NotesViewTmuxTests.commandCount(daemon, "mark")
                try TestArtefacts.write("focus-tmux-latency.txt", """
                    50 scrolls and marks, key to both followers' first rows: median \(sorted[sorted.count / 2].milliseconds) ms, max \(sorted.last!.milliseconds) ms
                    LINE commands \(lines), MARK commands \(marks)

                    """)
                #expect(lines >= 1 && marks >= 1)
            }
        }
    }

    @Test("a held key, 30 presses a second for 5 s: at most one LINE in flight, every follower ends at the presenter's line")
    func heldKey() async throws {
        try await withDaemon(["walk.txt": Self.document], arguments: ["--token", "s3cret"]) { daemon, workspace in
            try workspace.write("token", "s3cret\n")
            let token = workspace.root.appendingPathComponent("token").path
            try await withTmux(workspace) { tmux in
                for (name, args) in [("presenter", ["--name", "ann", "--token-file", token]), ("a", ["--name", "bob"]),
                                     ("b", ["--name", "cid"])] {
                    try await tmux.openTerminal(name, columns: 70, rows: Self.rows)
                    try await tmux.type(name, try pagerCommand(daemon, args), enter: true)
                    try await tmux.waitFor(name, showing: "L001 of the walk-through")
                }
                let before = try await NotesViewTmuxTests.commandCount(daemon, "line")
                let presses = 150
                let start = ContinuousClock.now
                for i in 0..<presses {
                    try await tmux.type("presenter", "j")
                    let due = start + .milliseconds(33 * (i + 1))
                    if ContinuousClock.now < due { try await Task.sleep(until: due) }
                }
                let lastKey = ContinuousClock.now
                let final = min(1 + presses, Self.maxTop)
                try await tmux.waitFor("presenter", "line \(final) at the top") { Self.topLine($0) == final }
                for follower in ["a", "b"] {
                    try await tmux.waitFor(follower, "the presenter's final line \(final)") { Self.topLine($0) == final }
                }
                let settled = ContinuousClock.now - lastKey
                let sent = try await NotesViewTmuxTests.commandCount(daemon, "line") - before
                #expect(sent >= 1 && sent <= presses, "LINE commands: \(sent) for \(presses) presses")
                try TestArtefacts.write("held-key-latency.txt", """
                    \(presses) presses at 30 a second: \(sent) LINE commands, one in flight; followers at the final line \(settled.milliseconds) ms after the last key (tmux polling every 50 ms)

                    """)
            }
        }
    }
}
