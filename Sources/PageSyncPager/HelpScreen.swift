/// The help screen's scroll state and keys, as on a page: q h H Esc Enter close it; j k ↓ ↑
/// scroll a line, d u half a screen, Space f PgDn b PgUp a screen, g < Home to its top and
/// G > End to its end (never above its top; the caller clamps the end).
package struct HelpScreen: Equatable, Sendable {
    /// How many rows the help is scrolled down.
    package private(set) var offset = 0

    /// Handles `key`; returns false for a key that does nothing here. `close` is set when the key closes the help.
    package mutating func handle(_ key: Key, halfPage: Int, close: inout Bool) -> Bool {
        switch key {
        case .char("q"), .char("h"), .char("H"), .escape, .enter: close = true
        case .char("j"), .down: offset += 1
        case .char("k"), .up: offset = max(0, offset - 1)
        case .char("d"): offset += halfPage
        case .char("u"): offset = max(0, offset - halfPage)
        case .char(" "), .pageDown, .char("f"): offset += 2 * halfPage
        case .pageUp, .char("b"): offset = max(0, offset - 2 * halfPage)
        case .char("g"), .char("<"), .home: offset = 0
        case .char("G"), .char(">"), .end: offset = Int.max / 2  // clamped to the last screen
        default: return false
        }
        return true
    }

    /// Keeps the offset within `0...maxOffset`.
    package mutating func clamp(maxOffset: Int) { offset = min(max(0, offset), maxOffset) }

    /// Every property at its initial value.
    package init() {}
}
