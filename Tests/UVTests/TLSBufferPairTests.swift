import Testing
import TestSupport
import UV

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

    private func take(_ pair: TLSBufferPair) -> [UInt8] {
        var taken: [UInt8] = []
        pair.takeOutput { taken += Array($0) }
        return taken
    }

    @Test func outputGoesToAFreeScratchAndTakingItFreesIt() {
        let scratch = TLSOutputScratch(capacity: 16)
        let pair = TLSBufferPair(scratch: scratch)
        Array("one".utf8).withUnsafeBytes { pair.write($0) }
        Array("two".utf8).withUnsafeBytes { pair.write($0) }
        #expect(pair.holdsScratch)
        #expect(pair.outputCount == 6)
        #expect(pair.capacity == 0, "no storage of its own")
        #expect(take(pair) == Array("onetwo".utf8))
        #expect(scratch.isFree)
        #expect(pair.outputCount == 0)
        #expect(take(pair) == [], "no output, nothing taken")
    }

    @Test func aSecondPairUsesItsOwnArrayWhileTheScratchIsHeld() {
        let scratch = TLSOutputScratch(capacity: 16)
        let first = TLSBufferPair(scratch: scratch)
        let second = TLSBufferPair(scratch: scratch)
        Array("first".utf8).withUnsafeBytes { first.write($0) }
        Array("second".utf8).withUnsafeBytes { second.write($0) }
        #expect(first.holdsScratch)
        #expect(!second.holdsScratch)
        #expect(second.outputCount == 6)
        #expect(second.capacity > 0)
        #expect(take(second) == Array("second".utf8))
        #expect(take(first) == Array("first".utf8))
        #expect(scratch.isFree)
        #expect(second.capacity == 0)
    }

    @Test func outputTooLargeForTheScratchMovesToTheArrayInOrder() {
        let scratch = TLSOutputScratch(capacity: 8)
        let pair = TLSBufferPair(scratch: scratch)
        Array("abcde".utf8).withUnsafeBytes { pair.write($0) }
        #expect(pair.holdsScratch)
        Array("fghij".utf8).withUnsafeBytes { pair.write($0) }
        #expect(!pair.holdsScratch, "what did not fit took the scratch's bytes along")
        #expect(scratch.isFree, "another pair may use the scratch now")
        // The array has output: later bytes follow it there even though they would fit.
        Array("k".utf8).withUnsafeBytes { pair.write($0) }
        #expect(!pair.holdsScratch)
        #expect(pair.outputCount == 11)
        #expect(take(pair) == Array("abcdefghijk".utf8))
        #expect(pair.capacity == 0)
        // Empty again: the scratch serves it again.
        Array("l".utf8).withUnsafeBytes { pair.write($0) }
        #expect(pair.holdsScratch)
        #expect(take(pair) == Array("l".utf8))
    }

    @Test func aPairGoneWhileHoldingTheScratchFreesIt() {
        let scratch = TLSOutputScratch(capacity: 16)
        var pair: TLSBufferPair? = TLSBufferPair(scratch: scratch)
        Array("lost".utf8).withUnsafeBytes { pair?.write($0) }
        #expect(!scratch.isFree)
        pair = nil
        #expect(scratch.isFree)
        let other = TLSBufferPair(scratch: scratch)
        Array("next".utf8).withUnsafeBytes { other.write($0) }
        #expect(other.holdsScratch)
        #expect(take(other) == Array("next".utf8))
    }
}
