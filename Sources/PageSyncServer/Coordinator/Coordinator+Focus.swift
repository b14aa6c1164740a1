import Logging
import PageSyncCore

/// `LINE` and `MARK`: the room's focus within its page, changed like a page turn (checked by
/// ``Room``, staged, saved, then fanned out as a `PAGE` line carrying `line=` and `mark=`), or
/// with Redis decided by the engine like a page turn.
extension Coordinator {
    /// Changes the room's focus, checked against the current page's line count.
    func focus(_ runtime: RoomRuntime, _ focusChange: FocusChange, ifVersion: UInt64?, from session: Session) {
        let lines: Int
        do {
            lines = try runtime.currentPageLineCount()
        } catch {
            logger.error("room \(runtime.room.name): counting the lines of page \(runtime.room.state.page): \(error)")
            stage(session, .bytes(Wire.error(ProtocolError(code: .internalError, message: "could not read the document", closesConnection: false))))
            return
        }
        if let authority {
            // Control and the page's end are this daemon's to check (it counted the lines); the
            // version, IF and whether the room is still on that page are the engine's.
            var trial = runtime.room
            if case .failure(let error) = trial.setFocus(focusChange, lineCount: lines, ifVersion: nil, by: session.name,
                                                          hasControl: session.control), error != .versionExhausted {
                stage(session, reporting: .navigationError(error, room: runtime.room.name))
                return
            }
            let pending = PendingReply()
            stage(session, .pending(pending))
            let room = runtime.room.name
            let id = session.id
            authority.changeFocus(room: room, focus: focusChange, ifVersion: ifVersion, by: session.name, page: runtime.room.state.page,
                                  saved: runtime.saved) { [unowned self] decision in
                self.navigationDecided(decision, room: room, reply: pending, session: id)
            }
            return
        }
        change(runtime, from: session, counted: false) {
            $0.setFocus(focusChange, lineCount: lines, ifVersion: ifVersion, by: session.name, hasControl: session.control)
        }
    }
}
