/// When a change counts as saved, and so when its `OK` and `PAGE` may leave.
public enum Durability: String, Equatable, Sendable, CaseIterable, CustomStringConvertible {
    /// The journal is written before replies leave (a process crash, `kill -9` or OOM kill
    /// loses nothing acknowledged) and synced to the device at most once a second, off the
    /// loop: a power loss can lose about the last second, and the epoch then says so.
    case batch
    /// Group commit: a group's replies and events leave only after one `fdatasync` covering
    /// all of its changes has completed. Nothing acknowledged is ever lost.
    case always

    /// The default.
    public static let `default` = Durability.batch

    /// Parses `batch` or `always`.
    public init?(parsing text: some StringProtocol) {
        self.init(rawValue: String(text))
    }

    public var description: String { rawValue }
}
