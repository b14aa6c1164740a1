/// How far ahead of its records the journal file is filled with zeros.
///
/// `fdatasync` after an append must also commit the file's new size (on ext4, a journal
/// commit on top of the data), while after a write inside space already written and synced
/// it flushes the data alone: on the 2-core machine of BENCHMARKS.md, 100-byte records synced
/// one by one took 143–148 µs appended and 107–117 µs written over zeros (measured for
/// `57154ef`, which made the journal fill zeros ahead). PostgreSQL zero-fills its
/// WAL segments for the same reason. So the journal engine writes each record at its offset
/// (not `O_APPEND`), and before a write would pass the end of the file, first extends the file
/// by ``chunk`` bytes of zeros; the next sync puts them on the device along with the records.
///
/// Recovery reads zeros after the last record as the end (``JournalRecovery``). When the
/// zeros cannot be written (a full disk), records are appended as before, and filling is
/// tried again only after another ``chunk`` of records: a full disk costs no more than one
/// failed fill per chunk. On a nearly full disk the zeros are sized to the space there is
/// (``ahead(free:)``), so they never take the room a compaction needs.
public struct JournalPreallocation: Equatable, Sendable {
    /// Bytes of zeros added at a time.
    public static let chunk = 256 << 10

    /// The file's size: its records and the zeros after them.
    public private(set) var fileSize: Int
    /// After a failed fill, no new fill before the records reach this offset.
    public private(set) var retryAt = 0

    /// A file of `fileSize` bytes, all records (the engine cuts a recovered journal to its
    /// records before writing).
    public init(fileSize: Int) {
        self.fileSize = fileSize
    }

    /// The range to fill with zeros before `count` bytes are written at offset `end` (the end
    /// of the records), or nil when they fit, a failed fill is waiting, or the disk has no
    /// room for zeros ahead. `free`: the bytes free on the file system, when known.
    public func fill(writing count: Int, at end: Int, free: Int? = nil) -> Range<Int>? {
        guard end + count > fileSize, end >= retryAt else { return nil }
        let ahead = Self.ahead(free: free)
        guard ahead > 0 else { return nil }
        return max(fileSize, end)..<(end + count + ahead)
    }

    /// How many zeros to write ahead with `free` bytes free: a ``chunk``, or a quarter of the
    /// free space in whole 4 KiB pages when that is less (none below one page).
    public static func ahead(free: Int?) -> Int {
        guard let free else { return chunk }
        return min(chunk, max(0, free) / 4 / 4096 * 4096)
    }

    /// The zeros of `range` were written.
    public mutating func filled(_ range: Range<Int>) {
        fileSize = max(fileSize, range.upperBound)
    }

    /// Writing zeros failed (the file was cut back to ``fileSize``) with the records ending at `end`.
    public mutating func fillFailed(at end: Int) {
        retryAt = end + Self.chunk
    }

    /// Records were written up to `end`.
    public mutating func wrote(upTo end: Int) {
        fileSize = max(fileSize, end)
    }
}
