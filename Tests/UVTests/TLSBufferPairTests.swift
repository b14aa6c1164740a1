import Testing
import TestSupport
@testable import UV

@Suite("TLS buffer pair (the BIO's storage)")
struct TLSBufferPairTests {
    private func read(_ pair: TLSBufferPair, upTo count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pair.read(into: $0) }
        return Array(bytes.prefix(got))
    }

    @Test func readsInPiecesInOrderThenReleasesTheStorage() {
        let pair = TLSBufferPair()
        Array("abcdef".utf8).withUnsafeBytes { pair.receive($0) }
        #expect(pair.unreadCount == 6)
        #expect(read(pair, upTo: 4) == Array("abcd".utf8))
        #expect(pair.unreadCount == 2)
        #expect(pair.capacity > 0)
        #expect(read(pair, upTo: 10) == Array("ef".utf8))
        #expect(pair.unreadCount == 0)
        #expect(pair.capacity == 0, "an emptied input keeps no storage")
        #expect(read(pair, upTo: 10) == [], "nothing to read is 0 bytes, not an end")
    }

    @Test func receivingAfterAPartialReadKeepsOnlyTheUnreadBytes() {
        let pair = TLSBufferPair()
        Array("abcdef".utf8).withUnsafeBytes { pair.receive($0) }
        _ = read(pair, upTo: 5)
        Array("gh".utf8).withUnsafeBytes { pair.receive($0) }
        #expect(pair.unreadCount == 3)
        #expect(pair.input == Array("fgh".utf8))
        #expect(read(pair, upTo: 10) == Array("fgh".utf8))
    }

    @Test func emptyInputIsIgnored() {
        let pair = TLSBufferPair()
        [UInt8]().withUnsafeBytes { pair.receive($0) }
        #expect(pair.unreadCount == 0)
        #expect(pair.capacity == 0)
    }

    @Test func outputIsTakenWholeOnceThenReleased() {
        let pair = TLSBufferPair()
        Array("one".utf8).withUnsafeBytes { pair.write($0) }
        Array("two".utf8).withUnsafeBytes { pair.write($0) }
        var taken: [[UInt8]] = []
        pair.takeOutput { taken.append(Array($0)) }
        #expect(taken == [Array("onetwo".utf8)])
        #expect(pair.capacity == 0)
        pair.takeOutput { taken.append(Array($0)) }
        #expect(taken.count == 1, "no output, no call")
    }
}
