/// Bytes lent out only inside a closure, as `[UInt8]` lends them.
public protocol ContiguousBytesLender {
    /// Calls `body` with the bytes, valid until it returns.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ContiguousBytesLender where Element == UInt8 {}

/// Hands `body` the bytes of `parts` in order, up to `groupSize` parts at a time, each group's
/// bytes all valid at once: how a gathered write (`writev`) is made from buffers that lend
/// their bytes only inside a closure. Each part's `withUnsafeBytes` is nested in the previous
/// one's, so the nesting is at most `groupSize` deep; `body` is called once per group.
@inlinable
public func withGatheredBytes<Parts: RandomAccessCollection>(
    _ parts: Parts, groupSize: Int = 16, _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> Void
) where Parts.Element: ContiguousBytesLender {
    precondition(groupSize > 0, "withGatheredBytes: a group holds at least one part")
    withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: groupSize) { group in
        var start = parts.startIndex
        while start != parts.endIndex {
            let end = parts.index(start, offsetBy: groupSize, limitedBy: parts.endIndex) ?? parts.endIndex
            gather(parts[start..<end], from: start, into: group, filled: 0, body)
            start = end
        }
    }
}

/// Puts the bytes of `parts[index...]` into `group[filled...]`, nested, then calls `body`.
@inlinable
func gather<Parts: Collection>(
    _ parts: Parts, from index: Parts.Index,
    into group: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>, filled: Int,
    _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> Void
) where Parts.Element: ContiguousBytesLender {
    guard index != parts.endIndex else {
        body(UnsafeBufferPointer(rebasing: group[..<filled]))
        return
    }
    parts[index].withUnsafeBytes { bytes in
        group[filled] = bytes
        gather(parts, from: parts.index(after: index), into: group, filled: filled + 1, body)
    }
}
