/// Bytes written once into one heap object, then only read: the lines every change sends (a
/// room's `PAGE` line, a navigation's `OK`), shared by reference by every client they go to.
///
/// It is a `[UInt8]` without the cost of making one: allocating an array looks up the standard
/// library's generic storage metadata each time (about 360 instructions on Linux, more than
/// the line's encoding), where this class's metadata is its own. Make one with
/// ``write(capacity:_:)``; it cannot be changed afterwards.
///
/// Its readers are `public` and `@inlinable` so they are inlined where lines are written:
/// as `package` members, Swift 6.3 left them as calls (unspecialized generic ones).
public final class ByteLine: ManagedBuffer<Int, UInt8> {
    /// The bytes `body` writes, at most `capacity` of them (writing more stops the process, as
    /// ``ByteWriter`` does). The writer is valid only inside `body`: do not let it escape.
    package static func write(capacity: Int, _ body: (inout ByteWriter) -> Void) -> ByteLine {
        let buffer = create(minimumCapacity: max(capacity, 1)) { buffer in
            // The header is the count, known once the bytes are written.
            buffer.withUnsafeMutablePointerToElements { base in
                var writer = ByteWriter(base: base, capacity: capacity)
                body(&writer)
                return writer.count
            }
        }
        return unsafeDowncast(buffer, to: ByteLine.self)
    }

    /// A line holding a copy of `bytes`.
    package static func copying(_ bytes: some Collection<UInt8>) -> ByteLine {
        write(capacity: bytes.count) { out in
            for byte in bytes { out.byte(byte) }
        }
    }

    /// The number of bytes.
    @inlinable
    public var count: Int {
        // Through the pointer: `header`, a class's stored property, is checked for exclusive access.
        withUnsafeMutablePointerToHeader { $0.pointee }
    }

    /// Calls `body` with the bytes, valid until it returns.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { count, bytes in
            try body(UnsafeRawBufferPointer(start: bytes, count: count.pointee))
        }
    }

    /// A copy of the bytes as an array.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
