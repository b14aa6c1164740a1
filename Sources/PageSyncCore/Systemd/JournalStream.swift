/// The value of `JOURNAL_STREAM`: `<device>:<inode>` of the stream systemd connected to the
/// service's stdout/stderr (`systemd.exec(5)`).
///
/// A process should treat its stderr as the journal only if stderr's `st_dev`/`st_ino` match
/// these numbers: the variable is inherited by children whose output may go elsewhere.
public struct JournalStream: Equatable, Sendable {
    /// `st_dev` of the journal stream.
    public let device: UInt64
    /// `st_ino` of the journal stream.
    public let inode: UInt64

    /// Creates a value from the two numbers.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// Parses `"<device>:<inode>"` (two strict decimals). Nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let device = SystemdParsing.unsignedDecimal(String(parts[0])),
              let inode = SystemdParsing.unsignedDecimal(String(parts[1])) else {
            return nil
        }
        self.init(device: device, inode: inode)
    }

    /// True when a descriptor with this `st_dev` and `st_ino` is the journal stream.
    public func matches(device: UInt64, inode: UInt64) -> Bool {
        self.device == device && self.inode == inode
    }
}
