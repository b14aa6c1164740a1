/// The `OK page=<n> pages=<count> version=<v> line=<n> mark=<a>-<b>` of a navigation, `LINE`
/// or `MARK`, held as its numbers.
///
/// Every change answers its requester with one. Held as numbers, the reply costs no
/// allocation while it waits for its group: its bytes are written into temporary memory only
/// as it leaves (``withUnsafeBytes(_:)``), and are ``Wire/navigated(page:pageCount:version:)``'s.
public struct NavigatedReply: Equatable, Sendable {
    /// The page the room is on.
    public let page: PageNumber
    /// The number of pages of the room's document.
    public let pageCount: Int
    /// The room's version.
    public let version: UInt64
    /// The line at the room's screens' top.
    public let line: Int
    /// The marked lines, or nil.
    public let mark: LineRange?
    /// The line's length in bytes, LF included (worked out once: a waiting reply's bytes are
    /// counted when it is staged, taken and written).
    public let count: Int

    /// The reply reporting these numbers.
    public init(page: PageNumber, pageCount: Int, version: UInt64, line: Int = 1, mark: LineRange? = nil) {
        self.page = page
        self.pageCount = pageCount
        self.version = version
        self.line = line
        self.mark = mark
        // "OK " "page=" " pages=" " version=" " line=" " mark=" and the LF.
        count = 3 + 5 + 7 + 9 + 6 + 6 + 1 + Self.digits(page.number) + Self.digits(pageCount) + ByteWriter.decimalDigits(version)
            + Self.digits(line) + (mark.map { Self.digits($0.first) + ($0.last == $0.first ? 0 : 1 + Self.digits($0.last)) } ?? 1)
    }

    /// The reply reporting `state`'s position and focus.
    public init(_ state: RoomState) {
        self.init(page: state.page, pageCount: state.pageCount, version: state.version, line: state.line, mark: state.mark)
    }

    /// The most bytes a reply takes, LF included: `3 + Wire.positionCapacity + Wire.focusCapacity + 1`.
    public static var capacity: Int { 158 }

    /// Calls `body` with the line's bytes, written into temporary memory and valid until
    /// `body` returns. (Inlinable, so that the caller's `body` is not called generically.)
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.capacity, alignment: 1) { buffer in
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<write(into: buffer)]))
        }
    }

    /// Writes the line into `buffer`, which holds at least ``capacity`` bytes, and returns
    /// how many bytes it wrote (``count``).
    public func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= Self.capacity, "NavigatedReply: a buffer smaller than the longest reply")
        var writer = ByteWriter(base: buffer.bindMemory(to: UInt8.self).baseAddress!, capacity: Self.capacity)
        write(to: &writer)
        return writer.count
    }

    /// A copy of the line's bytes.
    public var bytes: [UInt8] {
        ByteWriter.bytes(capacity: Self.capacity) { write(to: &$0) }
    }

    /// Writes the line, LF included: the one encoder of a navigation's `OK`.
    func write(to writer: inout ByteWriter) {
        WireLineBuilder.build(&writer) { out in
            out.ascii("OK ")
            Wire.appendPosition(page: page, pageCount: pageCount, version: version, to: &out)
            Wire.appendFocus(line: line, mark: mark, to: &out)
        }
    }

    /// The decimal digits of `value`, with its sign.
    private static func digits(_ value: Int) -> Int {
        (value < 0 ? 1 : 0) + ByteWriter.decimalDigits(UInt64(value.magnitude))
    }
}
