/// The rules for a room's state at start, from what was saved and the document as it is now.
public enum RoomRestore {
    /// A room's starting state, and whether it must be saved before it is served.
    public struct Outcome: Equatable, Sendable {
        /// The state to serve.
        public var state: RoomState
        /// True when the state differs from what was saved (new room, changed
        /// document or clamped page): it is journaled at start, so the epoch survives.
        public var needsSave: Bool
    }

    /// - Parameters:
    ///   - saved: the room's last saved state, or nil for a room never saved.
    ///   - pageCount: the document's page count now (below 1 counts as 1).
    ///   - doc: the document's content id now.
    ///   - freshEpoch: the epoch for a room never saved.
    ///
    /// A saved room keeps its version, line and mark; if its document changed or its page no
    /// longer exists, that is a change: the version grows by one, and the line and mark go
    /// back to line 1 and none. Versions never go back within an
    /// epoch; a change at the last version (2^64−1) starts a new epoch at version 0.
    public static func restore(saved: SavedRoom?, pageCount: Int, doc: String, freshEpoch: Epoch) -> Outcome {
        let count = max(1, pageCount)
        guard let saved else {
            return Outcome(
                state: RoomState(page: .first, pageCount: count, version: 0, by: nil, doc: doc, epoch: freshEpoch),
                needsSave: true)
        }
        let page = PageNumber(clamping: saved.page.number, pageCount: count)
        var state = RoomState(page: page, pageCount: count, version: saved.version, by: saved.by, doc: doc, epoch: saved.epoch,
                              line: saved.line, mark: saved.mark)
        var needsSave = false
        if saved.doc != doc || page != saved.page {
            // The page's lines are not known here: a changed document starts its page at
            // line 1 with no mark, never past the page's end.
            state.line = 1
            state.mark = nil
            if state.version < UInt64.max {
                state.version += 1
            } else {
                // No version is left in this history: the change starts a new one.
                state.epoch = freshEpoch
                state.version = 0
            }
            needsSave = true
        }
        return Outcome(state: state, needsSave: needsSave)
    }
}
