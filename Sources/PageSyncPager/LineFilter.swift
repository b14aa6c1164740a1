/// What `&` keeps on screen: the lines that match a pattern, or with a leading `!` (as in less,
/// `&!pattern`) the lines that do not.
public struct LineFilter: Sendable {
    /// The pattern, without the `!`.
    public let pattern: SearchPattern
    /// True: lines that match are shown; false (`!`): lines that do not match are.
    public let showsMatches: Bool

    /// Parses `&`'s text: `pattern` or `!pattern`.
    /// - Throws: ``SearchPatternError`` when the pattern (after `!`) is empty or not a valid regex.
    public init(_ text: String) throws(SearchPatternError) {
        if text.hasPrefix("!") {
            pattern = try SearchPattern(String(text.dropFirst()))
            showsMatches = false
        } else {
            pattern = try SearchPattern(text)
            showsMatches = true
        }
    }

    /// The text as typed (`!` included).
    public var text: String { (showsMatches ? "" : "!") + pattern.text }

    /// Whether `line` (raw document text) stays on screen.
    public func shows(_ line: some StringProtocol) -> Bool {
        pattern.matches(line) == showsMatches
    }
}
