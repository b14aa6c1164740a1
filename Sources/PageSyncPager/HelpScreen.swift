/// The help screen's scroll state and keys: q h H Esc Enter close it; j k d u Space f b PgUp
/// PgDn scroll it (never above its top).
package struct HelpScreen: Equatable, Sendable {
    /// How many rows the help is scrolled down.
    package private(set) var offset = 0

    /// Handles `key`; returns false for a key that does nothing here. `close` is set when the key closes the help.
    package mutating func handle(_ key: Key, halfPage: Int, close: inout Bool) -> Bool {
        switch key {
        case .char("q"), .char("h"), .char("H"), .escape, .enter: close = true
        case .char("j"), .down: offset += 1
        case .char("k"), .up: offset = max(0, offset - 1)
        case .char("d"), .char(" "), .pageDown, .char("f"): offset += halfPage
        case .char("u"), .pageUp, .char("b"): offset = max(0, offset - halfPage)
        default: return false
        }
        return true
    }

    /// Keeps the offset within `0...maxOffset`.
    package mutating func clamp(maxOffset: Int) { offset = min(max(0, offset), maxOffset) }

    /// Every property at its initial value.
    package init() {}
}
