import Logging
import PageSyncCore

/// `LINE` and `MARK`: the room's focus within its page, changed like a page turn (checked by
/// ``Room``, staged, saved, then fanned out as a `PAGE` line carrying `line=` and `mark=`).
extension Coordinator {
    /// Changes the room's focus by `apply`, given the current page's line count.
    func focus(_ runtime: RoomRuntime, from session: Session,
               _ apply: (inout Room, Int) -> Result<NavigationOutcome, NavigationError>) {
        if authority != nil {
            stage(session, .bytes(Wire.error(ProtocolError(
                code: .full, message: "LINE and MARK are not shared through redis yet", closesConnection: false))))
            return
        }
        let lines: Int
        do {
            lines = try runtime.currentPageLineCount()
        } catch {
            logger.error("room \(runtime.room.name): counting the lines of page \(runtime.room.state.page): \(error)")
            stage(session, .bytes(Wire.error(ProtocolError(code: .internalError, message: "could not read the document", closesConnection: false))))
            return
        }
        change(runtime, from: session, counted: false) { apply(&$0, lines) }
    }
}
