import PageSyncCore

extension Document {
    /// How many lines page `page` has, as `TEXT` returns them (numbered from 1): its line
    /// feeds, and one more for a last line without one. An empty page has 0. Read a megabyte at
    /// a time, so a long page costs no more memory than a `TEXT` reply.
    public func lineCount(of page: PageNumber) throws(DocumentError) -> Int {
        let size = index.byteRange(of: page).count
        var lines = 0
        var offset = 0
        var endsWithLF = true
        while offset < size {
            guard let piece = try text(of: page, from: offset, limit: 1 << 20), piece.next > offset else { break }
            for byte in piece.bytes where byte == 0x0A { lines += 1 }
            endsWithLF = piece.bytes.last == 0x0A
            offset = piece.next
        }
        return lines + (endsWithLF ? 0 : 1)
    }
}
