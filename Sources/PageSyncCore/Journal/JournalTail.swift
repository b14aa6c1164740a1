/// Whether the bad end of a journal is a write that a crash cut short, or damage.
///
/// The distinction decides the epoch. A write the crash interrupted never returned, so what it
/// held was never acknowledged: dropping it loses nothing anyone was told, and the rooms keep
/// their epoch. Anything else that drops bytes at the end (a bit flip in a whole record, a
/// wrong length, a file cut where no crash cuts one) may drop an acknowledged record, so every
/// room starts a new epoch, as for damage in the middle.
///
/// What a crash can leave. The journal engine writes each group of records with `pwrite` at the
/// end of the records, into zeros written ahead or past the end of the file. When the process
/// dies (kill -9, an OOM kill, a crash) on a running machine, the page cache keeps every byte a
/// write copied, and the kernel copies a write a page at a time, checking for a fatal signal
/// between pages (`generic_perform_write`). A write a crash interrupts therefore stops at a
/// page boundary: its first bytes, up to a multiple of 4 KiB in the file, and after them the
/// zeros that were there, or the end of the file. A short write on a full disk stops the same
/// way. (A power loss can lose any page, but the machine then reboots, and an unclean stop
/// followed by a reboot starts a new epoch anyway: ``JournalRecovery/newEpochReason(currentBootID:)``.)
///
/// So the end is a cut-short write only when all of this holds:
/// - the journal was not closed cleanly after it was last opened (a clean stop cuts the file
///   to its whole records: nothing may follow them);
/// - after the last non-zero byte, the file is zeros (or ends) up to the next multiple of
///   ``pageSize``, and that boundary is inside the file or its end; fewer than
///   ``longestZeroRun`` of those zeros come before the boundary (they were written: the
///   record's own zero bytes), so a record whose end was zeroed is not mistaken for a cut;
/// - the bad frame does not end before that boundary: its header is cut, or the length it
///   declares reaches past the boundary;
/// - the frame is not a whole record with a damaged length: its payload, measured by its own
///   fields up to the boundary, does not match the checksum in its header.
/// Anything else is damage.
public enum JournalTail {
    /// The unit in which a crash cuts a write: the smallest page size (4 KiB). Larger pages are
    /// multiples of it, so their boundaries are found too.
    public static let pageSize = 4096
    /// More zero bytes in a row than any stretch of records holds (the longest: a room record
    /// at version 0 of epoch 1, 15 bytes).
    public static let longestZeroRun = 32

    /// Whether the bad frame at `offset` (nothing valid follows it, and not everything after it
    /// is zero) is a write a crash cut short. `closedCleanly`: the journal's last boot marker is
    /// followed by a clean-stop record.
    public static func isCutByCrash(_ bytes: UnsafeRawBufferPointer, at offset: Int, closedCleanly: Bool) -> Bool {
        guard !closedCleanly, let last = lastNonZero(bytes, from: offset) else { return false }
        let cut = (last + 1 + pageSize - 1) / pageSize * pageSize
        guard cut <= bytes.count, cut - (last + 1) < longestZeroRun else { return false }
        let header = JournalCodec.headerSize
        guard cut >= offset + header else { return true }  // the header itself was cut
        guard let length = JournalCodec.declaredLength(in: bytes, at: offset),
            length >= 1, length <= JournalCodec.maxPayload,
            offset + header + length > cut
        else { return false }
        // A whole record whose length field was damaged: its own fields give its length, and
        // the checksum agrees with that length.
        if let natural = JournalCodec.naturalPayloadLength(in: bytes, payloadAt: offset + header, limit: cut),
            offset + header + natural <= cut,
            JournalCodec.checksumMatches(in: bytes, at: offset, length: natural)
        {
            return false
        }
        return true
    }

    /// Convenience for tests and tools: ``isCutByCrash(_:at:closedCleanly:)`` over an array.
    public static func isCutByCrash(_ bytes: [UInt8], at offset: Int, closedCleanly: Bool = false) -> Bool {
        bytes.withUnsafeBytes { isCutByCrash($0, at: offset, closedCleanly: closedCleanly) }
    }

    /// The offset of the last non-zero byte at or after `offset`, if any.
    private static func lastNonZero(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        var i = bytes.count - 1
        while i >= offset {
            if bytes[i] != 0 { return i }
            i -= 1
        }
        return nil
    }
}
