/// Builds one wire line straight into bytes, for the lines sent on every change (`PAGE`, and the
/// `OK` reply to a navigation): no `String` is formed, and the only allocation is the result,
/// sized once from a bound the caller gives (``ByteWriter``).
///
/// A line gives exactly what `Wire.line` gives for the same text: every control character
/// (C0 including CR and LF, DEL, and C1) replaced by one space, then LF. Only ``text(_:)``
/// can carry one (field names, numbers and hex are ASCII without controls), so it is
/// replaced there, as the text is copied; ``bytes(_:)`` takes only what another builder made
/// (``fragment(capacity:_:)``), where that was done already.
package struct WireLineBuilder {
    private var writer: ByteWriter

    /// The line `body` builds, then LF. `capacity` bounds what `body` writes (not counting
    /// the LF): the sum of the ``ascii(_:)`` texts, `utf8.count` of each ``text(_:)``, the
    /// count of each ``bytes(_:)``, 20 for each ``decimal(_:)-(UInt64)`` and 16 for each
    /// ``hex16(_:)``. Writing more stops the process (``ByteWriter``).
    package static func line(capacity: Int, _ body: (inout WireLineBuilder) -> Void) -> [UInt8] {
        ByteWriter.bytes(capacity: capacity + 1) { build(&$0, body) }
    }

    /// ``line(capacity:_:)`` as a ``ByteLine``: for the lines of every change, which cost less
    /// to allocate that way.
    package static func byteLine(capacity: Int, _ body: (inout WireLineBuilder) -> Void) -> ByteLine {
        ByteLine.write(capacity: capacity + 1) { build(&$0, body) }
    }

    /// The bytes `body` builds, without the LF: a piece of a line (see ``PageLineTemplate``).
    package static func fragment(capacity: Int, _ body: (inout WireLineBuilder) -> Void) -> [UInt8] {
        ByteWriter.bytes(capacity: capacity) { fill(&$0, body) }
    }

    /// Writes what `body` builds, then the LF, into `writer`.
    static func build(_ writer: inout ByteWriter, _ body: (inout WireLineBuilder) -> Void) {
        fill(&writer, body)
        writer.byte(0x0A)
    }

    private static func fill(_ writer: inout ByteWriter, _ body: (inout WireLineBuilder) -> Void) {
        var builder = WireLineBuilder(writer: writer)
        body(&builder)
        writer = builder.writer
    }

    /// The most bytes ``decimal(_:)-(UInt64)`` and ``decimal(_:)-(Int)`` write.
    package static let decimalCapacity = 20

    /// Appends ASCII text (a field name or a keyword).
    package mutating func ascii(_ text: StaticString) {
        writer.ascii(text)
    }

    /// Appends bytes as they are: only a fragment made by ``fragment(capacity:_:)``, whose
    /// control characters were replaced when it was made.
    package mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
        writer.bytes(bytes)
    }

    /// Appends text's UTF-8, control characters replaced by spaces.
    package mutating func text(_ text: String) {
        writer.utf8ReplacingControls(text)
    }

    /// Appends `value` in decimal, as `String(value)` would.
    package mutating func decimal(_ value: UInt64) {
        writer.decimal(value)
    }

    /// Appends `value` in decimal (negative values with a leading `-`), as `String(value)` would.
    package mutating func decimal(_ value: Int) {
        writer.decimal(value)
    }

    /// Appends `value` as 16 lower-case hex digits, zero-padded (an ``Epoch``'s form).
    package mutating func hex16(_ value: UInt64) {
        writer.hex16(value)
    }
}
