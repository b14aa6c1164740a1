import PageSyncCore

extension Coordinator {
    /// `NOTES [<n>]`: page `page`'s speaker notes, for a member with control only (`ERR 403`
    /// otherwise, whatever the page), as TEXT sends a page: the same header, body and
    /// `max-text` limit (cut at it with `truncated=yes`). A page without notes has an empty body.
    func sendNotes(of page: PageNumber, to session: Session) {
        let runtime = session.runtime
        guard session.control else {
            stage(session, .bytes(Wire.notesForbidden))
            return
        }
        guard page.number <= runtime.document.pageCount else {
            stage(session, reporting: .navigationError(.noSuchPage(page), room: runtime.room.name))
            return
        }
        let notes = runtime.document.notes.notes(of: page)
        let sent = Array(notes.prefix(config.maxTextBytes))
        let encoder = TextReplyEncoder(
            page: page, pageCount: runtime.document.pageCount, doc: runtime.document.id, bytes: sent,
            pageByteCount: notes.count, truncated: sent.count < notes.count, reply: "NOTES")
        stage(session, .text(encoder, size: sent.count + 64))
    }
}
