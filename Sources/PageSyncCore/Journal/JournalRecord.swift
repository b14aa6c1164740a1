/// One room's saved state: what a journal record holds and what recovery gives back.
public struct SavedRoom: Equatable, Sendable {
    /// The room's name.
    public var room: String
    /// The page the room was on.
    public var page: PageNumber
    /// The room's version.
    public var version: UInt64
    /// Who turned the page last; nil when nobody has.
    public var by: String?
    /// The document content id when saved.
    public var doc: String
    /// The room's epoch.
    public var epoch: Epoch
    /// The line of the page at the room's screens' top, from 1.
    public var line: Int
    /// The marked lines of the page, or nil.
    public var mark: LineRange?

    /// Creates a saved state.
    public init(room: String, page: PageNumber, version: UInt64, by: String?, doc: String, epoch: Epoch,
                line: Int = 1, mark: LineRange? = nil) {
        self.room = room
        self.page = page
        self.version = version
        self.by = by
        self.doc = doc
        self.epoch = epoch
        self.line = line
        self.mark = mark
    }

    /// The saved form of a room's state.
    public init(room: String, state: RoomState) {
        self.init(room: room, page: state.page, version: state.version, by: state.by, doc: state.doc, epoch: state.epoch,
                  line: state.line, mark: state.mark)
    }

    /// Whether the line or the mark differ from a fresh page's (line 1, no mark): only then
    /// does the journal need the longer `F` record.
    public var hasFocus: Bool { line != 1 || mark != nil }
}

/// A record of the state journal.
public enum JournalRecord: Equatable, Sendable {
    /// A room's whole state after a change (or at a snapshot).
    case room(SavedRoom)
    /// The daemon opened the journal during the boot with this id
    /// (`/proc/sys/kernel/random/boot_id`).
    case opened(bootID: String)
    /// The daemon stopped cleanly: everything before this record was synced.
    case closed
}
