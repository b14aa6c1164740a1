import PageSyncCore
import Testing

/// The guard looks at the first byte a connection ever sends, and at nothing after it.
@Suite struct CrossProtocolGuardTests {
    static let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xF8, 0x01, 0x00, 0x00, 0xF4, 0x03, 0x03]

    @Test func aTLSHandshakeAsTheFirstBytesIsRefusedWithOneLineAndClosed() {
        var guardian = CrossProtocolGuard()
        let verdict = guardian.inspect(Self.clientHello)
        #expect(verdict == CrossProtocolGuard.tlsError)
        #expect(CrossProtocolGuard.tlsError.closesConnection)
        #expect(CrossProtocolGuard.tlsError.code == .malformed)
        #expect(CrossProtocolGuard.tlsError.message == "this is a plaintext pagesync port, not TLS; connect without TLS")
    }

    @Test func anyOtherFirstByteIsLetThrough() {
        for byte in [UInt8(ascii: "N"), UInt8(ascii: "p"), 0x15, 0x17, 0x00, 0x0A, 0x80, 0xFF] {
            var guardian = CrossProtocolGuard()
            let verdict = guardian.inspect([byte, 0x16])
            #expect(verdict == nil, "first byte \(byte)")
            #expect(guardian.hasLooked)
        }
    }

    @Test func onlyTheFirstByteEverIsLookedAt() {
        var guardian = CrossProtocolGuard()
        // A later read that begins with 0x16 (a fuzzed or mistyped line) is for the parser.
        let verdicts = [Array("ping\n".utf8), Self.clientHello, [0x16]].map { guardian.inspect($0) }
        #expect(verdicts == [nil, nil, nil])
        #expect(guardian.hasLooked)
    }

    @Test func anEmptyReadDecidesNothing() {
        var guardian = CrossProtocolGuard()
        let empty = guardian.inspect([UInt8]())
        #expect(empty == nil)
        #expect(!guardian.hasLooked)
        let verdicts = [Self.clientHello, Self.clientHello].map { guardian.inspect($0) }
        #expect(verdicts == [CrossProtocolGuard.tlsError, nil], "decided once, on the first non-empty read")
        #expect(guardian.hasLooked)
    }

    @Test func theByteItselfIsAControlCharacterToTheParser() {
        #expect(CrossProtocolGuard.check(firstByte: CrossProtocolGuard.tlsHandshakeByte) == CrossProtocolGuard.tlsError)
        #expect(CommandParser.parse([CrossProtocolGuard.tlsHandshakeByte]) == .failure(.malformed("control character 0x16 in line")))
    }
}
