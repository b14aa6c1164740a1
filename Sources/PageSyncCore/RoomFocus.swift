/// Lines `first` through `last` of a page, both included, numbered from 1: a room's mark.
public struct LineRange: Equatable, Hashable, Sendable {
    /// The first marked line, at least 1.
    public let first: Int
    /// The last marked line, at least ``first``.
    public let last: Int

    /// The range `first...last`, or nil unless `1 <= first <= last`.
    public init?(first: Int, last: Int) {
        guard first >= 1, last >= first else { return nil }
        self.first = first
        self.last = last
    }

    /// The part of the range on a page of `lines` lines, or nil when none of it is.
    public func clamped(toLines lines: Int) -> LineRange? {
        LineRange(first: first, last: min(last, lines))
    }

    /// `a-b`, or `a` for one line: how `MARK` and the `mark=` field write it.
    public var text: String { first == last ? "\(first)" : "\(first)-\(last)" }
}

/// The room's focus within its page: the line at its screens' top and the marked lines. Both
/// are room state: a change bumps the version, is saved and reaches every member like a page
/// turn, and a page turn resets them (line 1, no mark).
extension Room {
    /// Sets the room's top line on behalf of the client named `by`, on a page of `lineCount`
    /// lines. The checks and their order are ``navigate(_:ifVersion:by:hasControl:)``'s:
    /// forbidden, then `IF` (conflict), then the line (`noSuchLine` past the page's end), then
    /// the version. The same line is `.unchanged`.
    public mutating func setLine(_ line: Int, lineCount: Int, ifVersion: UInt64?, by: String,
                                 hasControl: Bool) -> Result<NavigationOutcome, NavigationError> {
        if let refusal = focusRefusal(ifVersion: ifVersion, hasControl: hasControl) { return .failure(refusal) }
        let lines = max(1, lineCount)
        guard (1...lines).contains(line) else { return .failure(.noSuchLine(line, lines: lines)) }
        guard line != state.line else { return .success(.unchanged) }
        return changeFocus(by: by) { $0.line = line }
    }

    /// Marks lines `mark` of the current page (`lineCount` lines), or clears the mark (nil), on
    /// behalf of the client named `by`. Checks as ``setLine(_:lineCount:ifVersion:by:hasControl:)``:
    /// a mark reaching past the page's end is `noSuchLine`. The same mark is `.unchanged`.
    public mutating func setMark(_ mark: LineRange?, lineCount: Int, ifVersion: UInt64?, by: String,
                                 hasControl: Bool) -> Result<NavigationOutcome, NavigationError> {
        if let refusal = focusRefusal(ifVersion: ifVersion, hasControl: hasControl) { return .failure(refusal) }
        let lines = max(1, lineCount)
        if let mark, mark.last > lines { return .failure(.noSuchLine(mark.last, lines: lines)) }
        guard mark != state.mark else { return .success(.unchanged) }
        return changeFocus(by: by) { $0.mark = mark }
    }

    private func focusRefusal(ifVersion: UInt64?, hasControl: Bool) -> NavigationError? {
        if policy.requiresToken && !hasControl { return .forbidden }
        if let expected = ifVersion, expected != state.version { return .conflict(expected: expected) }
        return nil
    }

    private mutating func changeFocus(by: String, _ change: (inout RoomState) -> Void) -> Result<NavigationOutcome, NavigationError> {
        guard canChange else { return .failure(.versionExhausted) }
        change(&state)
        bumpVersion()
        state.by = by
        return .success(.moved)
    }
}

/// A change of the room's focus: `LINE <n>` or `MARK <a>-<b>` / `MARK -` (nil).
public enum FocusChange: Equatable, Sendable {
    case line(Int)
    case mark(LineRange?)
}

extension Room {
    /// ``setLine(_:lineCount:ifVersion:by:hasControl:)`` or ``setMark(_:lineCount:ifVersion:by:hasControl:)``.
    public mutating func setFocus(_ change: FocusChange, lineCount: Int, ifVersion: UInt64?, by: String,
                                  hasControl: Bool) -> Result<NavigationOutcome, NavigationError> {
        switch change {
        case .line(let line): setLine(line, lineCount: lineCount, ifVersion: ifVersion, by: by, hasControl: hasControl)
        case .mark(let mark): setMark(mark, lineCount: lineCount, ifVersion: ifVersion, by: by, hasControl: hasControl)
        }
    }
}
