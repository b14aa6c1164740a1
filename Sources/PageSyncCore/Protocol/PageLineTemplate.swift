/// One room's `PAGE` line (``Wire/event(room:_:)``), with the parts that rarely change encoded
/// once: `PAGE room=<name> ` for the room's life, and ` by=<by> doc=<doc> epoch=<e>` until
/// one of those three changes. A change then costs the copy of the two pieces, the three
/// numbers between them and the line and mark after them (` line= mark=`, which a scroll
/// changes as often as a page turn changes the page), where ``Wire/event(room:_:)`` scans every name for control
/// characters again.
///
/// In a room turned by one person, or by a few in turn, the tail is re-encoded only when the
/// person, the document or the epoch changes. The bytes are always exactly
/// ``Wire/event(room:_:)``'s for the same name and state.
package struct PageLineTemplate {
    /// `PAGE room=<name> `.
    private let head: [UInt8]
    /// ` by=<by> doc=<doc> epoch=<e>`, for ``tailKey``.
    private var tail: [UInt8] = []
    /// The `by`, `doc` and `epoch` ``tail`` was encoded for; nil before the first line.
    private var tailKey: (by: String?, doc: String, epoch: Epoch)?
    /// How many times the tail was encoded (the first line included).
    package private(set) var tailsEncoded = 0

    /// A template for the room named `room`.
    package init(room: String) {
        head = WireLineBuilder.fragment(capacity: 11 + room.utf8.count) { out in
            out.ascii("PAGE room=")
            out.text(room)
            out.ascii(" ")
        }
    }

    /// Whether `a` and `b` are the same bytes. Not `==`, which compares by canonical
    /// equivalence: `"é"` (U+00E9) equals `"e\u{301}"`, whose bytes differ.
    static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        if sameRepresentation(a, b) { return true }
        let n = a.utf8.count
        guard n == b.utf8.count else { return false }
        // Indexed, not `elementsEqual` (an iterator per side: several times the cost).
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for i in 0..<n where a[i] != b[i] { return false }
                return true
            }
        }
    }

    /// Whether `a` and `b` are one representation: the same bytes held inline, or the same
    /// storage. Either way they are the same bytes, found without reading them: the usual
    /// case (the same person's name, the same document id), where reading both strings' UTF-8
    /// cost more than the rest of the line. False says nothing.
    @inline(__always)
    private static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        #if arch(x86_64) || arch(arm64)
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
        #else
        false
        #endif
    }

    /// The room's `PAGE` line for `state`.
    package mutating func line(_ state: RoomState) -> ByteLine {
        if let key = tailKey, key.epoch == state.epoch, Self.sameBytes(key.by, state.by), Self.sameBytes(key.doc, state.doc) {
            // The tail holds.
        } else {
            tail = WireLineBuilder.fragment(capacity: Wire.tailFieldsCapacity(state)) { out in
                Wire.appendTailFields(state, to: &out)
            }
            tailKey = (state.by, state.doc, state.epoch)
            tailsEncoded += 1
        }
        return head.withUnsafeBytes { head in
            tail.withUnsafeBytes { tail in
                WireLineBuilder.byteLine(capacity: head.count + Wire.positionCapacity + tail.count + Wire.focusCapacity) { out in
                    out.bytes(head)
                    Wire.appendPosition(state, to: &out)
                    out.bytes(tail)
                    Wire.appendFocus(line: state.line, mark: state.mark, to: &out)
                }
            }
        }
    }
}
