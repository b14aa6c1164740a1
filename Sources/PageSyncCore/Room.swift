/// A room's authoritative state: everything a `PAGE` event carries.
public struct RoomState: Equatable, Sendable {
    /// The page the room is on; within `1...pageCount` for a state held by a `Room`.
    public var page: PageNumber
    /// The number of pages of the room's document; >= 1 for a state held by a `Room`.
    public var pageCount: Int
    /// Grows by one with every change of the state; never goes back.
    public var version: UInt64
    /// Who changed the page last; nil when nobody has yet.
    public var by: String?
    /// An identifier of the document's current content.
    public var doc: String
    /// The room's history: versions grow within one epoch and are not comparable across two.
    public var epoch: Epoch
    /// The line of the current page that the room's screens show at their top, from 1 (a line
    /// of the document's own text as `TEXT` returns it, never a wrapped or rendered row).
    public var line: Int
    /// The lines of the current page that are highlighted, or nil.
    public var mark: LineRange?

    /// Creates a state holding exactly the given values.
    public init(page: PageNumber, pageCount: Int, version: UInt64, by: String?, doc: String, epoch: Epoch = Epoch(0),
                line: Int = 1, mark: LineRange? = nil) {
        self.page = page
        self.pageCount = pageCount
        self.version = version
        self.by = by
        self.doc = doc
        self.epoch = epoch
        self.line = line
        self.mark = mark
    }
}

/// How a room behaves: whether it wraps around at its ends and whether turning pages
/// needs a control token.
public struct RoomPolicy: Equatable, Sendable {
    /// True: `NEXT` on the last page goes to page 1 and `PREV` on page 1 to the last page.
    /// False: those are `pastEnd` errors.
    public var wraps: Bool
    /// True for presenter rooms: navigation needs control (granted by `AUTH <token>`).
    public var requiresToken: Bool

    /// Creates a policy.
    public init(wraps: Bool, requiresToken: Bool) {
        self.wraps = wraps
        self.requiresToken = requiresToken
    }
}

/// An end of a document.
public enum Edge: Equatable, Sendable {
    /// Page 1.
    case first
    /// The last page.
    case last
}

/// Why a navigation was refused. A refused navigation changes nothing.
public enum NavigationError: Error, Equatable, Sendable {
    /// The room needs a control token and the client does not have control (403).
    case forbidden
    /// `IF <expected>` did not match the room's version (409).
    case conflict(expected: UInt64)
    /// `NEXT` on the last page or `PREV` on page 1 of a room that stops at its ends (416).
    case pastEnd(Edge)
    /// `GOTO` a page beyond the document's page count (404).
    case noSuchPage(PageNumber)
    /// The version is already `UInt64.max`: a change would have to reuse it, so the room
    /// refuses every further change (500).
    case versionExhausted
    /// `LINE` or `MARK` past the current page's last line (416); `lines` is the page's count.
    case noSuchLine(Int, lines: Int)
}

/// What a successful navigation did.
public enum NavigationOutcome: Equatable, Sendable {
    /// The page changed; the version grew by one.
    case moved
    /// The target was the current page; nothing changed.
    case unchanged
}

/// The pure state machine of one room. It does no I/O; its owner saves and broadcasts.
public struct Room: Sendable {
    /// The room's name.
    public let name: String
    /// How the room behaves at its ends and whether it needs a token.
    public var policy: RoomPolicy
    /// The current state; `page` is always within `1...pageCount` and `pageCount` >= 1.
    public internal(set) var state: RoomState

    /// Creates a room. A `pageCount` below 1 becomes 1, and `page` is clamped into
    /// `1...pageCount`.
    public init(name: String, policy: RoomPolicy, state: RoomState) {
        self.name = name
        self.policy = policy
        var state = state
        state.pageCount = max(1, state.pageCount)
        state.page = PageNumber(clamping: state.page.number, pageCount: state.pageCount)
        self.state = state
    }

    /// Applies a navigation on behalf of the client named `by`.
    ///
    /// Check order: forbidden (`policy.requiresToken && !hasControl`), then the `IF`
    /// condition (conflict), then the target page (pastEnd / noSuchPage), then, for a
    /// change, the version (versionExhausted at `UInt64.max`).
    /// `.moved`: the page changed, `version` grew by one and `by` is set.
    /// `.unchanged`: the target is the current page; nothing changed.
    /// On failure nothing changed.
    ///
    /// A version is never reused: at `UInt64.max` a change is refused with
    /// `versionExhausted` (staying on the current page is still `.unchanged`).
    public mutating func navigate(_ nav: Navigation, ifVersion: UInt64?, by: String, hasControl: Bool) -> Result<NavigationOutcome, NavigationError> {
        if policy.requiresToken && !hasControl { return .failure(.forbidden) }
        if let expected = ifVersion, expected != state.version {
            return .failure(.conflict(expected: expected))
        }
        let current = state.page
        let count = state.pageCount
        let target: PageNumber
        switch nav {
        case .next:
            guard let next = current.advanced(by: 1, pageCount: count, wrapping: policy.wraps) else {
                return .failure(.pastEnd(.last))
            }
            target = next
        case .previous:
            guard let previous = current.advanced(by: -1, pageCount: count, wrapping: policy.wraps) else {
                return .failure(.pastEnd(.first))
            }
            target = previous
        case .first:
            target = .first
        case .last:
            target = .last(of: count)
        case .goto(let page):
            guard page.number <= count else { return .failure(.noSuchPage(page)) }
            target = page
        }
        guard target != current else { return .success(.unchanged) }
        guard canChange else { return .failure(.versionExhausted) }
        state.page = target
        state.line = 1
        state.mark = nil
        bumpVersion()
        state.by = by
        return .success(.moved)
    }

    /// The document was re-indexed: it now has `pageCount` pages (below 1 becomes 1) and
    /// content id `doc`, and the page it is on has `lineCount` lines (nil: not known, the line
    /// and mark stay). The page is clamped to the new count; a page that changed starts at line
    /// 1 with no mark, and a page that got shorter clamps the line and the mark into it.
    /// Returns true, and bumps the version, iff the page count, the page, the doc, the line or
    /// the mark changed. `by` is left as it was. When the version is already `UInt64.max`
    /// (``canChange`` is false) nothing changes and it returns false: the version is never reused.
    public mutating func documentChanged(pageCount: Int, doc: String, lineCount: Int? = nil) -> Bool {
        let count = max(1, pageCount)
        let page = PageNumber(clamping: state.page.number, pageCount: count)
        var line = state.line
        var mark = state.mark
        if page != state.page {
            line = 1
            mark = nil
        } else if let lineCount {
            line = min(line, max(1, lineCount))
            mark = mark?.clamped(toLines: lineCount)
        }
        guard count != state.pageCount || page != state.page || doc != state.doc
                || line != state.line || mark != state.mark else { return false }
        guard canChange else { return false }
        state.pageCount = count
        state.page = page
        state.doc = doc
        state.line = line
        state.mark = mark
        bumpVersion()
        return true
    }

    /// Puts back a state saved earlier (a change that could not be saved is undone).
    /// The page is clamped into the current page count, which stays as it is.
    public mutating func restore(_ saved: RoomState) {
        let count = state.pageCount
        state = saved
        state.pageCount = count
        state.page = PageNumber(clamping: saved.page.number, pageCount: count)
    }

    /// False once the version is `UInt64.max`: no further change can get a new version.
    public var canChange: Bool { state.version < UInt64.max }

    /// Callers check ``canChange`` first.
    mutating func bumpVersion() {
        precondition(canChange, "version exhausted")
        state.version += 1
    }
}
