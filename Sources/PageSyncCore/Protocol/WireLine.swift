#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// What a line from the server is, told by its first word (PROTOCOL.md, "Lines the server sends").
public enum WireLineKind: Equatable, Sendable {
    /// `HELLO`: the greeting, once, right after connecting.
    case hello
    /// `OK`: the reply to a command that worked.
    case ok
    /// `ERR`: the reply to a command that did not work.
    case error
    /// `PAGE`: the room's whole new state, pushed on every change.
    case page
    /// `BYE`: the server is about to close the connection.
    case bye
    /// Any other first word: a content line of a multi-line reply (a room of `ROOMS`, a member
    /// of `WHO`), or a line that is not pagesync's.
    case other

    /// The kind whose first word is `word` (exactly, upper case as the server sends it).
    public init(firstWord word: UnsafeRawBufferPointer) {
        guard (2...5).contains(word.count), let base = word.baseAddress else { self = .other; return }
        // The word's bytes as one number, the first byte lowest.
        let low = UInt64(UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)))
        let packed: UInt64 = switch word.count {
        case 2: low
        case 3: low | UInt64(word[2]) << 16
        case 4: UInt64(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)))
        default: UInt64(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self))) | UInt64(word[4]) << 32
        }
        switch (word.count, packed) {
        case (2, 0x4B4F): self = .ok  // "OK"
        case (3, 0x52_5245): self = .error  // "ERR"
        case (3, 0x45_5942): self = .bye  // "BYE"
        case (4, 0x4547_4150): self = .page  // "PAGE"
        case (5, 0x4F_4C4C_4548): self = .hello  // "HELLO"
        default: self = .other
        }
    }

    /// Whether a line of this kind answers a command (`OK` or `ERR`): every command gets exactly
    /// one, in order.
    public var isReply: Bool { self == .ok || self == .error }
}

/// One line from the server read where it lies, without copying it or forming a `String`: the
/// client-side parser that ``WireLine`` is built on, cheap enough for a benchmark's followers to
/// read every `PAGE` line with.
///
/// The rules, which ``WireLine`` shares: words are separated by one or more spaces. The first
/// word tells the line's ``kind``. Every later word whose part before its first `=` is one or
/// more lowercase ASCII letters is a `key=value` field (every field the server sends is); any
/// other word is a plain word (`pagesync/1`, `TEXT`, an error's code and the words of its text,
/// so that `unknown command "a=b"` stays text). A key held twice counts once, the first time
/// (the server sends each key once). Fields the reader does not know are simply not asked for:
/// later versions may add fields.
///
/// The view is valid only while the bytes it was made from are.
public struct WireLineView {
    /// The line's bytes, without a trailing LF and a CR before it.
    public let bytes: UnsafeRawBufferPointer

    /// A view of `line`; a trailing LF, then a trailing CR, are left out.
    public init(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        if end > 0 && line[end - 1] == 0x0A { end -= 1 }
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])
    }

    /// The words of a line in order, the first word included; each a slice of the line.
    public struct Words: IteratorProtocol, Sequence {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// The next word, or nil after the last.
        public mutating func next() -> UnsafeRawBufferPointer? {
            let end = bytes.count
            while position < end && bytes[position] == 0x20 { position += 1 }
            guard position < end else { return nil }
            let start = position
            position = WireLineView.space(in: bytes, from: start)
            return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        }
    }

    /// The index of the first space in `bytes` at or after `start`, or `bytes.count`. Eight bytes
    /// at a time: a benchmark's followers read millions of lines a second with this.
    static func space(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var i = start
        let end = bytes.count
        if let base = bytes.baseAddress {
            while i + 8 <= end {
                // A zero byte in `word` is a space in the line; the lowest flagged byte is the first
                // zero (a flag can be false only above a true zero).
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x2020_2020_2020_2020
                let zeros = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
                if zeros != 0 { return i + zeros.trailingZeroBitCount >> 3 }
                i += 8
            }
        }
        while i < end && bytes[i] != 0x20 { i += 1 }
        return i
    }

    /// Every word of the line, the first one included.
    public var words: Words { Words(bytes) }

    /// What the line is, by its first word (``WireLineKind/other`` for a blank line).
    public var kind: WireLineKind {
        switch bytes.first {
        case 0x48, 0x4F, 0x45, 0x50, 0x42, 0x20: break  // H O E P B, or a space before the first word
        default: return .other  // at once: a benchmark's followers also read other servers' framing lines
        }
        var words = words
        guard let first = words.next() else { return .other }
        return WireLineKind(firstWord: first)
    }

    /// Where the words after the first begin to be looked for: the end of the first word.
    var endOfFirstWord: Int {
        var i = 0
        while i < bytes.count && bytes[i] == 0x20 { i += 1 }
        return Self.space(in: bytes, from: i)
    }

    /// The first plain word after the first word (`TEXT` of `OK TEXT ...`, `409` of `ERR 409 ...`,
    /// `pagesync/1` of a greeting), or nil when there is none (`OK page=2 ...`).
    public var firstPlainWord: UnsafeRawBufferPointer? {
        var words = words
        _ = words.next()
        while let word = words.next() {
            if Self.field(in: word) == nil { return word }
        }
        return nil
    }

    /// Whether ``firstPlainWord`` is exactly `word`: `firstPlainWord(is: "PONG")` for `OK PONG`,
    /// `firstPlainWord(is: "JOIN")` for `OK JOIN ...`.
    public func firstPlainWord(is word: StaticString) -> Bool {
        firstPlainWord.map { Self.equals($0, word) } ?? false
    }

    /// Whether this is the line holding only `.` that ends a multi-line reply (see ``DotUnstuffer``).
    public var endsMultilineReply: Bool { Self.equals(bytes, ".") }

    /// The value of field `key`, or nil when the line has no such field (and for a key that is
    /// not one or more lowercase ASCII letters, which no field has).
    public func field(_ key: StaticString) -> UnsafeRawBufferPointer? {
        let keyBytes = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        let k = keyBytes.count
        let end = bytes.count
        guard k > 0, let base = bytes.baseAddress else { return nil }
        // Where `key` starts a word (a space before it, `=` after it) past the first word. Found
        // by its first byte with memchr: a benchmark's followers read every PAGE line's version.
        var from = 1
        var wordsStart: Int?  // the end of the first word, worked out at the first candidate
        while from < end - k, let hit = memchr(base + from, Int32(keyBytes[0]), end - k - from) {
            let i = base.distance(to: UnsafeRawPointer(hit))
            from = i + 1
            guard bytes[i - 1] == 0x20, bytes[i + k] == 0x3D, Self.isField(key: keyBytes, at: i, of: bytes) else { continue }
            if wordsStart == nil { wordsStart = endOfFirstWord }
            guard i >= wordsStart! else { continue }
            return UnsafeRawBufferPointer(rebasing: bytes[(i + k + 1)..<Self.space(in: bytes, from: i + k + 1)])
        }
        return nil
    }

    /// Field `key` as an unsigned decimal number (digits only, no sign, at most `UInt64.max`), or nil.
    public func uint64(_ key: StaticString) -> UInt64? {
        field(key).flatMap(Self.decimal)
    }

    /// Field `key` as a decimal number that fits an `Int` (digits only, no sign), or nil.
    public func int(_ key: StaticString) -> Int? {
        uint64(key).flatMap { $0 <= UInt64(Int.max) ? Int($0) : nil }
    }

    /// Field `key` as a Bool: `yes` is true, `no` false, anything else (or no field) nil.
    public func yesNo(_ key: StaticString) -> Bool? {
        guard let value = field(key) else { return nil }
        if Self.equals(value, "yes") { return true }
        if Self.equals(value, "no") { return false }
        return nil
    }

    /// The code of an `ERR` line (its first plain word: digits, at most 999), or nil for any other line.
    public var errorCode: Int? {
        guard kind == .error, let word = firstPlainWord, let code = Self.decimal(word), code <= 999 else { return nil }
        return Int(code)
    }

    /// `word` as a field, split at its first `=`: nil for a plain word (nothing before the `=`, no
    /// `=`, or anything but lowercase ASCII letters before it).
    public static func field(in word: UnsafeRawBufferPointer) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        var i = 0
        while i < word.count, word[i] >= 0x61, word[i] <= 0x7A { i += 1 }
        guard i > 0, i < word.count, word[i] == 0x3D else { return nil }
        return (UnsafeRawBufferPointer(rebasing: word[0..<i]), UnsafeRawBufferPointer(rebasing: word[(i + 1)...]))
    }

    /// Whether `line` holds `key` at `start`, and `key` is lowercase ASCII letters (a field's key).
    static func isField(key: UnsafeRawBufferPointer, at start: Int, of line: UnsafeRawBufferPointer) -> Bool {
        for j in 0..<key.count {
            let byte = key[j]
            guard line[start + j] == byte, byte >= 0x61, byte <= 0x7A else { return false }
        }
        return true
    }

    /// Whether `bytes` are exactly the ASCII `text`.
    public static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        equals(bytes, UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    /// Decimal digits as a number: nil when empty, when anything else is there, or past `UInt64.max`.
    static func decimal(_ digits: UnsafeRawBufferPointer) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(byte &- 0x30))
            if o1 || o2 { return nil }
            value = a
        }
        return value
    }
}

/// A server line split into its kind, its plain words and its `key=value` fields, as the pager
/// and tests read them (the rules are ``WireLineView``'s).
public struct WireLine: Equatable, Sendable {
    /// What the line is, by its first word.
    public var kind: WireLineKind
    /// The first word as sent: `"HELLO"`, `"OK"`, `"ERR"`, `"PAGE"`, `"BYE"` or, for a content
    /// line of `ROOMS`/`WHO`, the room's or the client's name.
    public var head: String
    /// The words after the first that are not `key=value` fields, in order
    /// (e.g. `"pagesync/1"`, `"409"`, `"TEXT"`, the words of an error message).
    public var words: [String]
    /// The `key=value` fields (see ``WireLineView`` for which words are fields). A key held
    /// twice keeps its first value.
    public var fields: [String: String]

    /// Parses `line`; a trailing LF, then a trailing CR, are left out. Nil for a blank line.
    public init?(parsing line: String) {
        var line = line
        guard let parsed = line.withUTF8({ WireLine(WireLineView(UnsafeRawBufferPointer($0))) }) else { return nil }
        self = parsed
    }

    /// The line `view` reads, with its words and fields copied out. Nil for a blank line.
    public init?(_ view: WireLineView) {
        var all = view.words
        guard let first = all.next() else { return nil }
        kind = WireLineKind(firstWord: first)
        head = String(decoding: first, as: UTF8.self)
        words = []
        fields = [:]
        while let word = all.next() {
            if let (key, value) = WireLineView.field(in: word) {
                let name = String(decoding: key, as: UTF8.self)
                if fields[name] == nil { fields[name] = String(decoding: value, as: UTF8.self) }
            } else {
                words.append(String(decoding: word, as: UTF8.self))
            }
        }
    }

    /// The numeric code of an `ERR` line (its first plain word: digits, at most 999), or nil.
    public var errorCode: Int? {
        guard kind == .error, let code = words.first.flatMap(Self.decimal), code <= 999 else { return nil }
        return Int(code)
    }

    /// The text for people: the words of an `ERR` line after its code, or of any other line.
    public var text: String { words.dropFirst(kind == .error ? 1 : 0).joined(separator: " ") }

    /// Whether this is the `OK` line that opens a multi-line reply (`TEXT`, `HELP`, `ROOMS`, `WHO`, `INFO`, `NOTES`).
    public var startsMultilineReply: Bool {
        kind == .ok && ["TEXT", "HELP", "ROOMS", "WHO", "INFO", "NOTES"].contains(words.first ?? "")
    }

    /// A field as a decimal number that fits an `Int` (digits only, no sign), or nil.
    public func int(_ key: String) -> Int? {
        fields[key].flatMap(Self.decimal).flatMap { $0 <= UInt64(Int.max) ? Int($0) : nil }
    }

    /// The `version` field (digits only), or nil.
    public var version: UInt64? { fields["version"].flatMap(Self.decimal) }

    /// The `line` field, the room's top line (from 1), or nil when the line has none (a daemon
    /// older than the field) or it is not a line number.
    public var line: Int? { int("line").flatMap { $0 >= 1 ? $0 : nil } }

    /// The `mark` field: `.some(nil)` for `-` (no mark), the range for `a` or `a-b`, nil when the
    /// line has no `mark` field or it is not a range.
    public var mark: LineRange?? {
        guard let text = fields["mark"] else { return nil }
        if text == "-" { return .some(nil) }
        let ends = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = Self.decimal(String(ends[0])), let last = Self.decimal(String(ends[ends.count - 1])),
              first <= UInt64(Int.max), last <= UInt64(Int.max),
              let range = LineRange(first: Int(first), last: Int(last)) else { return nil }
        return .some(range)
    }

    /// The `by` field, who changed the room last: `.some(nil)` for `-` (nobody yet), nil when the
    /// line has no `by` field.
    public var by: String?? { fields["by"].map { $0 == "-" ? nil : $0 } }

    /// A `yes`/`no` field as a Bool, or nil.
    public func yesNo(_ key: String) -> Bool? {
        switch fields[key] {
        case "yes": true
        case "no": false
        default: nil
        }
    }

    /// ``WireLineView``'s reading of a number, on a word copied out.
    private static func decimal(_ word: String) -> UInt64? {
        var word = word
        return word.withUTF8 { WireLineView.decimal(UnsafeRawBufferPointer($0)) }
    }
}

/// Undoes dot-stuffing when reading a multi-line reply.
public enum DotUnstuffer {
    /// Returns the content line (one leading `.` removed if present), or nil for the `.`
    /// line that ends the reply. `line` must not include its LF.
    public static func unstuff(_ line: Substring) -> Substring? {
        if line == "." { return nil }
        if line.first == "." { return line.dropFirst() }
        return line
    }
}
