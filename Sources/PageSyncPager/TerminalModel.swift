/// A pure model the interactive shell drives: events in, effects out, and a frame to paint.
/// The pager (``PagerModel``) and the notes view (``NotesViewModel``) are the two.
public protocol TerminalModel: Sendable {
    /// The terminal size the model lays out for.
    var size: TerminalSize { get }
    /// The connection as shown to people (the shell stops its greeting timeout once connected).
    var connection: ConnectionState { get }
    /// How often the shell reports the time with ``PagerEvent/tick(_:)`` (nil: never).
    var tickMilliseconds: UInt64? { get }
    /// Applies one event; returns what the shell must do, in order.
    mutating func handle(_ event: PagerEvent) -> [PagerEffect]
    /// The bytes of the whole screen.
    mutating func frame() -> String
}
