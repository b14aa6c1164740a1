/// A compiled search pattern: a regular expression (Swift `Regex` syntax), matched against
/// the visible text of a line (SGR styles and other escapes removed, see ``Sanitizer/plainText(_:)``).
///
/// Case-smart, as less with `-i`: a pattern with no uppercase letter ignores case; any
/// uppercase letter makes it case-sensitive. A letter right after a backslash (`\S`, `\W`,
/// `\B`, `\D`) is part of an escape and does not count.
public struct SearchPattern: @unchecked Sendable {
    // `Regex` is not declared Sendable; this value is immutable after init and only ever
    // read (matching does not mutate a Regex), so sharing it across threads is safe.

    /// The pattern as typed.
    public let text: String
    /// Whether matching ignores case (no uppercase letter in the pattern).
    public let ignoresCase: Bool
    private let regex: Regex<AnyRegexOutput>

    /// Compiles `text`.
    /// - Throws: ``SearchPatternError`` with a one-line message when `text` is empty or not a
    ///   valid regular expression.
    public init(_ text: String) throws(SearchPatternError) {
        guard !text.isEmpty else { throw SearchPatternError(message: "empty pattern") }
        let compiled: Regex<AnyRegexOutput>
        do {
            compiled = try Regex(text)
        } catch {
            throw SearchPatternError(message: "bad pattern \(text): \(Self.oneLine(String(describing: error)))")
        }
        self.text = text
        self.ignoresCase = !Self.hasUppercase(text)
        self.regex = ignoresCase ? compiled.ignoresCase() : compiled
    }

    /// Whether `line` (raw document text, escapes included) has a match, even an empty one.
    public func matches(_ line: some StringProtocol) -> Bool {
        let plain = Sanitizer.plainText(line)
        return (try? regex.firstMatch(in: plain)) != nil
    }

    /// The non-empty matches in `plain` (text without escapes), as character offsets, in order
    /// and not overlapping. Empty matches (`^`, `a*`) are not returned: there is nothing to mark.
    public func ranges(inPlain plain: String) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var offset = 0
        var index = plain.startIndex
        for match in plain.matches(of: regex) where !match.range.isEmpty {
            offset += plain[index..<match.range.lowerBound].count
            let length = plain[match.range].count
            if length > 0 { out.append(offset..<(offset + length)) }
            offset += length
            index = match.range.upperBound
        }
        return out
    }

    /// Whether `text` holds an uppercase letter that is not the letter of a backslash escape.
    package static func hasUppercase(_ text: String) -> Bool {
        var escaped = false
        for c in text {
            if escaped { escaped = false; continue }
            if c == "\\" { escaped = true; continue }
            if c.isUppercase { return true }
        }
        return false
    }

    /// The first line of a message, without trailing blanks.
    private static func oneLine(_ s: String) -> String {
        let first = s.split(whereSeparator: \.isNewline).first.map(String.init) ?? s
        return String(first.reversed().drop(while: { $0 == " " }).reversed())
    }
}

/// Why a pattern could not be used: a one-line message for the status line.
public struct SearchPatternError: Error, Equatable, Sendable {
    /// The message, one line.
    public let message: String

    /// Each stored property as given (the memberwise initializer, visible to the package's tests).
    package init(message: String) {
        self.message = message
    }
}
