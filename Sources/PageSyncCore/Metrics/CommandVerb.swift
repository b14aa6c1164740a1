/// The verb of a command, for counting commands by kind (`INFO`'s `command_<verb>` fields,
/// `pagesync_commands_total{command=...}`).
public enum CommandVerb: Int, Sendable, CaseIterable {
    case next, prev, first, last, goto, status, text, rooms, join, name, who, auth, ping, help, quit, info
    case notes
    case line, mark
    case view, hand

    /// The verb of `command`.
    @inline(__always)
    public init(_ command: Command) {
        switch command {
        case .navigate(let navigation, _):
            switch navigation {
            case .next: self = .next
            case .previous: self = .prev
            case .first: self = .first
            case .last: self = .last
            case .goto: self = .goto
            }
        case .line: self = .line
        case .view: self = .view
        case .hand: self = .hand
        case .mark: self = .mark
        case .status: self = .status
        case .text, .textFrom: self = .text
        case .rooms: self = .rooms
        case .notes: self = .notes
        case .join: self = .join
        case .name: self = .name
        case .who: self = .who
        case .auth: self = .auth
        case .ping: self = .ping
        case .help: self = .help
        case .quit: self = .quit
        case .info: self = .info
        }
    }

    /// The verb in lower case, as a field or label: `next`.
    public var name: String { String(describing: self) }
}
