/// One room as `ROOMS` lists it: its name, its state, how many clients are in it and its policy.
public struct RoomListing: Equatable, Sendable {
    /// The room's name.
    public var name: String
    /// The room's state (its page, page count, version and epoch are listed).
    public var state: RoomState
    /// The clients in the room (with Redis, every daemon's).
    public var clients: Int
    /// Whether turning pages needs a control token (`control=token`) or not (`control=open`).
    public var requiresToken: Bool
    /// Whether the room wraps around at its ends.
    public var wraps: Bool
    /// The document's title, percent-encoded (``WireText``); nil leaves `title=` out.
    public var title: String?

    /// A listing holding exactly the given values.
    public init(name: String, state: RoomState, clients: Int, requiresToken: Bool, wraps: Bool, title: String? = nil) {
        self.name = name
        self.state = state
        self.clients = clients
        self.requiresToken = requiresToken
        self.wraps = wraps
        self.title = title
    }
}

/// The replies that list rooms and members: `ROOMS` and `WHO` (PROTOCOL.md), multi-line replies
/// made with ``multiline(header:lines:)``.
extension Wire {
    /// The reply to `ROOMS`: `OK ROOMS <count>`, then per room
    /// `<name> page=<n> pages=<count> version=<v> epoch=<e> clients=<c> control=<open|token> wrap=<yes|no>`
    /// and ` title=<t>` when the room's document has a title, in the order given, then `.`.
    public static func rooms(_ rooms: [RoomListing]) -> [UInt8] {
        let lines = rooms.map { r -> Substring in
            let s = r.state
            return "\(r.name) page=\(s.page.number) pages=\(s.pageCount) version=\(s.version) epoch=\(s.epoch) clients=\(r.clients) control=\(r.requiresToken ? "token" : "open") wrap=\(yesNo(r.wraps))"
                + (r.title.map { " title=\($0)" } ?? "")
        }
        return multiline(header: "OK ROOMS \(lines.count)", lines: lines)
    }

    /// The reply to `WHO`: ``WhoPage/header(total:)`` (`OK WHO <total>`, with ` next=<offset>` when
    /// more names follow), then `lines` (each made with ``whoLine(member:isYou:)``), then `.`.
    public static func who(_ page: WhoPage, total: Int, lines: some Sequence<String>) -> [UInt8] {
        multiline(header: page.header(total: total), lines: lines.lazy.map { Substring($0) })
    }

    /// A member as one daemon tells others (through Redis) and as `WHO` lists it before `you=`:
    /// `<name> control=<yes|no> view=<follow|browse:<page>> hand=<up|down>`.
    public static func whoMember(name: String, control: Bool, view: MemberView = .follow, hand: Bool = false) -> String {
        "\(name) control=\(yesNo(control)) view=\(view.text) hand=\(hand ? "up" : "down")"
    }

    /// One line of a `WHO` reply: a ``whoMember(name:control:)`` line, then ` you=<yes|no>`
    /// (whether it is the client that asked).
    public static func whoLine(member: String, isYou: Bool) -> String {
        "\(member) you=\(yesNo(isYou))"
    }
}

/// The reply to `INFO` (PROTOCOL.md): a multi-line reply made with ``multiline(header:lines:)``.
extension Wire {
    /// `OK INFO`, then the `field:value` lines of `section` (every section for nil, an empty
    /// line between two; see ``InfoFields``), then `.`.
    public static func info(_ report: ServerReport, section: InfoSection?) -> [UInt8] {
        multiline(header: "OK INFO", lines: InfoFields.lines(of: section, report).lazy.map { Substring($0) })
    }
}
