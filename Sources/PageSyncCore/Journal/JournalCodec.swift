/// The journal's byte format.
///
/// A journal is a sequence of frames, each
/// `length: UInt32 LE | crc: UInt32 LE | payload (length bytes)`, where `crc` is the
/// CRC-32C of the four length bytes followed by the payload. A payload starts with a kind
/// byte:
/// - `R` room state: `epoch u64 | version u64 | page u32 | room str | by str | doc str`,
///   where `str` is `u16 LE length | UTF-8 bytes` and an empty `by` means nobody;
/// - `F` room state with its focus: `R`'s fields, then `line u32 | mark first u32 | mark last u32`
///   (`line` >= 1; no mark is `0 | 0`, else `1 <= first <= last`). A room whose line is 1 and
///   that has no mark is written as `R`, so a journal is readable by a daemon older than the
///   `F` record until some room uses `LINE` or `MARK`; such a daemon takes an `F` frame for
///   damage (it keeps the records before it and starts a new history after it, as for any
///   damaged journal);
/// - `O` opened: `boot id str`;
/// - `C` closed: nothing more.
///
/// All integers are little-endian. A frame's payload is at most ``maxPayload`` bytes, and at
/// least one, so a frame never starts with four zero bytes: a journal may end in zeros (space
/// filled ahead of its records, ``JournalPreallocation``), and recovery stops there.
public enum JournalCodec {
    /// Bytes before a payload: its length and its checksum.
    public static let headerSize = 8
    /// The largest payload a frame may have; longer lengths are damage.
    public static let maxPayload = 3 * 65_535 + 64

    /// Appends `record`'s frame to `out`. Strings longer than 65,535 bytes are cut (the
    /// server's names and ids are far shorter).
    public static func append(_ record: JournalRecord, to out: inout [UInt8]) {
        out.append(contentsOf: encode(record))
    }

    /// The frame of one record.
    public static func encode(_ record: JournalRecord) -> [UInt8] {
        ByteWriter.bytes(capacity: frameSize(record)) { write(record, to: &$0) }
    }

    /// The frames of `records`, one after another, in one allocation: what a group writes.
    public static func encode(rooms records: [SavedRoom]) -> [UInt8] {
        // Each record read in place through a pointer: iterating the array, or passing an
        // element on, copies it (its strings retained and released).
        records.withUnsafeBufferPointer { records in
            guard let first = records.baseAddress else { return [] }
            var size = 0
            for i in records.indices { size += roomFrameSize(first + i) }
            return ByteWriter.bytes(capacity: size) { out in
                for i in records.indices { writeRoom(first + i, to: &out) }
            }
        }
    }

    /// The exact size of `record`'s frame.
    static func frameSize(_ record: JournalRecord) -> Int {
        switch record {
        case .room(var r): withUnsafePointer(to: &r) { roomFrameSize($0) }
        case .opened(let bootID): headerSize + 1 + 2 + storedLength(bootID)
        case .closed: headerSize + 1
        }
    }

    /// The exact size of a room record's frame.
    private static func roomFrameSize(_ r: UnsafePointer<SavedRoom>) -> Int {
        headerSize + 1 + 8 + 8 + 4 + 3 * 2 + storedLength(r.pointee.room) + (r.pointee.by.map { storedLength($0) } ?? 0)
            + storedLength(r.pointee.doc) + (r.pointee.hasFocus ? focusSize : 0)
    }

    /// The bytes an `F` record has after `R`'s fields: the line and the mark's two ends.
    static let focusSize = 12

    /// Writes `record`'s frame.
    static func write(_ record: JournalRecord, to out: inout ByteWriter) {
        switch record {
        case .room(var r):
            withUnsafePointer(to: &r) { writeRoom($0, to: &out) }
        case .opened(let bootID):
            let start = beginFrame(&out)
            out.byte(UInt8(ascii: "O"))
            writeString(bootID, to: &out)
            endFrame(&out, start: start)
        case .closed:
            let start = beginFrame(&out)
            out.byte(UInt8(ascii: "C"))
            endFrame(&out, start: start)
        }
    }

    /// Writes a room record's frame, reading the record in place (without wrapping it in a
    /// ``JournalRecord`` or capturing it in a closure, both of which copy it).
    private static func writeRoom(_ r: UnsafePointer<SavedRoom>, to out: inout ByteWriter) {
        let start = beginFrame(&out)
        let focus = r.pointee.hasFocus
        out.byte(UInt8(ascii: focus ? "F" : "R"))
        out.littleEndian(r.pointee.epoch.value)
        out.littleEndian(r.pointee.version)
        out.littleEndian(UInt32(clamping: r.pointee.page.number))
        writeString(r.pointee.room, to: &out)
        if let by = r.pointee.by { writeString(by, to: &out) } else { writeString("", to: &out) }
        writeString(r.pointee.doc, to: &out)
        if focus {
            out.littleEndian(UInt32(clamping: r.pointee.line))
            out.littleEndian(UInt32(clamping: r.pointee.mark?.first ?? 0))
            out.littleEndian(UInt32(clamping: r.pointee.mark?.last ?? 0))
        }
        endFrame(&out, start: start)
    }

    /// Starts a frame: room for its header, filled in by ``endFrame(_:start:)`` once the
    /// payload is written. Returns where the frame starts.
    @inline(__always)
    private static func beginFrame(_ out: inout ByteWriter) -> Int {
        let start = out.count
        out.zeros(headerSize)
        return start
    }

    /// Ends the frame begun at `start`: its length and checksum go in front of the payload.
    @inline(__always)
    private static func endFrame(_ out: inout ByteWriter, start: Int) {
        let length = UInt32(out.count - start - headerSize)
        out.store(littleEndian: length, at: start)
        let lengthBytes = out.written(start..<start + 4)
        let payload = out.written(start + headerSize..<out.count)
        out.store(littleEndian: CRC32C.checksum(payload, continuing: CRC32C.checksum(lengthBytes)), at: start + 4)
    }

    /// What is at an offset of a journal.
    public enum Frame: Equatable, Sendable {
        /// A valid record, and the offset just after it.
        case record(JournalRecord, next: Int)
        /// Fewer bytes than a whole frame: a write cut short.
        case incomplete
        /// A frame whose length, checksum or payload is wrong.
        case damaged
    }

    /// Decodes the frame at `offset` of `bytes`.
    public static func frame(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Frame {
        switch check(in: bytes, at: offset) {
        case .room(_, let payload, let next):
            guard let record = record(payload: payload, in: bytes) else { return .damaged }
            return .record(record, next: next)
        case .other(let record, let next): return .record(record, next: next)
        case .incomplete: return .incomplete
        case .damaged: return .damaged
        }
    }

    /// What ``check(in:at:)`` finds at an offset: a frame checked without being decoded.
    public enum CheckedFrame: Equatable, Sendable {
        /// A valid room record. `room` is the byte range of its room name in the journal,
        /// `payload` that of its whole payload; decode it with ``record(payload:in:)``.
        case room(name: Range<Int>, payload: Range<Int>, next: Int)
        /// A valid record of another kind, decoded (these are rare: one per start and stop).
        case other(JournalRecord, next: Int)
        /// Fewer bytes than a whole frame: a write cut short.
        case incomplete
        /// A frame whose length, checksum or payload is wrong.
        case damaged
    }

    /// Checks the frame at `offset` in full (length, checksum and the payload's structure,
    /// UTF-8 included) but makes no `String` for a room record: it gives the byte ranges
    /// instead. Recovery uses it to read a journal of a million
    /// records without a million allocations, and decodes only each room's last record.
    public static func check(in bytes: UnsafeRawBufferPointer, at offset: Int) -> CheckedFrame {
        let available = bytes.count - offset
        guard available >= headerSize else { return .incomplete }
        let length = Int(readInteger(bytes, offset, as: UInt32.self))
        guard length >= 1, length <= maxPayload else { return .damaged }
        guard available - headerSize >= length else { return .incomplete }
        let crc = readInteger(bytes, offset + 4, as: UInt32.self)
        let start = offset + headerSize
        let end = start + length
        let lengthBytes = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 4])
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard CRC32C.checksum(payload, continuing: CRC32C.checksum(lengthBytes)) == crc else { return .damaged }
        let focus = payload[0] == UInt8(ascii: "F")
        guard focus || payload[0] == UInt8(ascii: "R") else {
            guard let record = decodePayload(payload) else { return .damaged }
            return .other(record, next: end)
        }
        // kind(1) epoch(8) version(8) page(4), then three strings.
        var at = 21
        guard length >= at, readInteger(payload, 17, as: UInt32.self) >= 1 else { return .damaged }
        var name = 0..<0
        for field in 0..<3 {
            guard length - at >= 2 else { return .damaged }
            let n = Int(readInteger(payload, at, as: UInt16.self))
            at += 2
            guard length - at >= n else { return .damaged }
            let text = UnsafeRawBufferPointer(rebasing: payload[at..<at + n])
            guard isValidUTF8(text) else { return .damaged }
            if field == 0 {
                guard n > 0 else { return .damaged }
                name = (start + at)..<(start + at + n)
            }
            at += n
        }
        if focus {
            guard length - at == focusSize, validFocus(payload, at) else { return .damaged }
            at += focusSize
        }
        guard at == length else { return .damaged }
        return .room(name: name, payload: start..<end, next: end)
    }

    /// The epoch and version of a room record whose payload ``check(in:at:)`` found valid,
    /// read in place (recovery checks that a room's versions never go back within an epoch).
    public static func roomVersion(payload: Range<Int>, in bytes: UnsafeRawBufferPointer) -> (epoch: UInt64, version: UInt64) {
        (readInteger(bytes, payload.lowerBound + 1, as: UInt64.self), readInteger(bytes, payload.lowerBound + 9, as: UInt64.self))
    }

    /// The length a payload starting at `start` has by its own fields (its kind, and for a room
    /// record the lengths of its three strings), reading no byte at or after `limit`; nil when
    /// a field it needs lies there, or the kind is unknown. It does not check the checksum.
    public static func naturalPayloadLength(in bytes: UnsafeRawBufferPointer, payloadAt start: Int, limit: Int) -> Int? {
        let limit = min(limit, bytes.count)
        guard start < limit else { return nil }
        var at: Int
        let strings: Int
        switch bytes[start] {
        case UInt8(ascii: "R"), UInt8(ascii: "F"): (at, strings) = (21, 3)
        case UInt8(ascii: "O"): (at, strings) = (1, 1)
        case UInt8(ascii: "C"): return 1
        default: return nil
        }
        for _ in 0..<strings {
            guard start + at + 2 <= limit else { return nil }
            at += 2 + Int(readInteger(bytes, start + at, as: UInt16.self))
        }
        return bytes[start] == UInt8(ascii: "F") ? at + focusSize : at
    }

    /// Whether the checksum stored in the frame header at `offset` is that of a frame whose
    /// payload is `length` bytes long (whatever its length field says); false when the file
    /// ends first.
    public static func checksumMatches(in bytes: UnsafeRawBufferPointer, at offset: Int, length: Int) -> Bool {
        guard length >= 1, offset + headerSize + length <= bytes.count else { return false }
        var lengthField = UInt32(length).littleEndian
        let lengthCRC = withUnsafeBytes(of: &lengthField) { CRC32C.checksum($0) }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerSize)..<(offset + headerSize + length)])
        return CRC32C.checksum(payload, continuing: lengthCRC) == readInteger(bytes, offset + 4, as: UInt32.self)
    }

    /// The payload length a frame header at `offset` declares, or nil when fewer than four
    /// bytes are left.
    public static func declaredLength(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        offset + 4 <= bytes.count ? Int(readInteger(bytes, offset, as: UInt32.self)) : nil
    }

    /// Decodes a payload that ``check(in:at:)`` found valid.
    public static func record(payload: Range<Int>, in bytes: UnsafeRawBufferPointer) -> JournalRecord? {
        decodePayload(UnsafeRawBufferPointer(rebasing: bytes[payload]))
    }

    /// Whether `bytes` are valid UTF-8, without making a String (ASCII, the common case, in
    /// one pass of comparisons).
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var ascii = true
        for b in bytes where b >= 0x80 {
            ascii = false
            break
        }
        if ascii { return true }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func decodePayload(_ p: UnsafeRawBufferPointer) -> JournalRecord? {
        var reader = Reader(bytes: p, offset: 1)
        switch p[0] {
        case UInt8(ascii: "R"), UInt8(ascii: "F"):
            guard let epoch = reader.integer(UInt64.self), let version = reader.integer(UInt64.self),
                let pageNumber = reader.integer(UInt32.self), let page = PageNumber(Int(pageNumber)),
                let room = reader.string(), !room.isEmpty, let by = reader.string(), let doc = reader.string()
            else { return nil }
            var saved = SavedRoom(room: room, page: page, version: version, by: by.isEmpty ? nil : by, doc: doc, epoch: Epoch(epoch))
            if p[0] == UInt8(ascii: "F") {
                guard p.count - reader.offset == focusSize, validFocus(p, reader.offset),
                      let line = reader.integer(UInt32.self), let first = reader.integer(UInt32.self),
                      let last = reader.integer(UInt32.self)
                else { return nil }
                saved.line = Int(line)
                saved.mark = LineRange(first: Int(first), last: Int(last))
            }
            guard reader.atEnd else { return nil }
            return .room(saved)
        case UInt8(ascii: "O"):
            guard let boot = reader.string(), reader.atEnd else { return nil }
            return .opened(bootID: boot)
        case UInt8(ascii: "C"):
            return reader.atEnd ? .closed : nil
        default:
            return nil
        }
    }

    /// Whether the twelve bytes at `at` are a valid focus: a line from 1, and no mark (`0 | 0`)
    /// or a range `1 <= first <= last`.
    private static func validFocus(_ p: UnsafeRawBufferPointer, _ at: Int) -> Bool {
        let line = readInteger(p, at, as: UInt32.self)
        let first = readInteger(p, at + 4, as: UInt32.self)
        let last = readInteger(p, at + 8, as: UInt32.self)
        return line >= 1 && ((first == 0 && last == 0) || (first >= 1 && last >= first))
    }

    /// How many of `s`'s UTF-8 bytes a record keeps: all of them below 65,535; else at most
    /// 65,535, never cutting inside a character.
    private static func storedLength(_ s: String) -> Int {
        let count = s.utf8.count
        if count < 65_535 { return count }  // every real name
        let utf8 = Array(s.utf8.prefix(65_535))
        var n = utf8.count
        while n > 0, utf8[n - 1] & 0xC0 == 0x80 { n -= 1 }
        if n > 0, utf8[n - 1] >= 0xC0 { n -= 1 }
        return n
    }

    private static func writeString(_ s: String, to out: inout ByteWriter) {
        // Every real name: its UTF-8 read once, in place, and copied whole.
        var s = s
        let whole: Bool = s.withUTF8 { bytes in
            guard bytes.count < 65_535 else { return false }
            out.littleEndian(UInt16(bytes.count))
            out.bytes(UnsafeRawBufferPointer(bytes))
            return true
        }
        if whole { return }
        let n = storedLength(s)
        out.littleEndian(UInt16(n))
        out.utf8(s, prefix: n)
    }

    private static func readInteger<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, _ offset: Int, as: T.Type) -> T {
        var v: T = 0
        withUnsafeMutableBytes(of: &v) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + MemoryLayout<T>.size])) }
        return T(littleEndian: v)
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        var atEnd: Bool { offset == bytes.count }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard bytes.count - offset >= MemoryLayout<T>.size else { return nil }
            defer { offset += MemoryLayout<T>.size }
            return JournalCodec.readInteger(bytes, offset, as: T.self)
        }

        mutating func string() -> String? {
            guard let n = integer(UInt16.self), bytes.count - offset >= Int(n) else { return nil }
            defer { offset += Int(n) }
            return String(validating: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(n)]), as: UTF8.self)
        }
    }
}
