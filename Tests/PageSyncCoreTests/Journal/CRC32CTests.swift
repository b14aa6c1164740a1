import Testing
import PageSyncCore

@Suite struct CRC32CTests {
    @Test func knownVectors() {
        // RFC 3720 (iSCSI) check value and test patterns.
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }

    @Test func piecesGiveTheSameChecksumAsTheWhole() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for cut in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let first = CRC32C.checksum(bytes[..<cut])
            #expect(CRC32C.checksum(bytes[cut...], continuing: first) == CRC32C.checksum(bytes), "cut at \(cut)")
        }
    }

    @Test func theSlicedPathMatchesTheBytewisePath() {
        // Lengths around the 8-byte stride, against a bit-by-bit reference.
        func reference(_ data: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for b in data {
                c ^= UInt32(b)
                for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            }
            return ~c
        }
        var g = SystemRandomNumberGenerator()
        for length in 0..<40 {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &g) }
            #expect(CRC32C.checksum(data) == reference(data), "length \(length)")
        }
    }
}

@Suite struct EpochTests {
    @Test func printsSixteenLowercaseHexDigitsAndParsesThemBack() {
        #expect(Epoch(0x3F).description == "000000000000003f")
        #expect(Epoch(UInt64.max).description == "ffffffffffffffff")
        #expect(Epoch(hex: "000000000000003F") == Epoch(0x3F))
        #expect(Epoch(hex: "ffffffffffffffff") == Epoch(UInt64.max))
        for bad in ["", "xyz", "12345678901234567", "-1", "+1", " 1", "0x1"] {
            #expect(Epoch(hex: bad) == nil, "\(bad)")
        }
    }

    @Test func randomEpochsAreNeverZeroAndDiffer() {
        let epochs = (0..<100).map { _ in Epoch.random() }
        #expect(!epochs.contains(Epoch(0)))
        #expect(Set(epochs).count == 100)
    }
}
