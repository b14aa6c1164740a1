import Testing
import PageSyncServer

@Suite struct TokenVerifierTests {
    @Test func equalAndUnequal() {
        let verifier = TokenVerifier()
        #expect(verifier.matches("s3cret", expected: "s3cret"))
        #expect(!verifier.matches("s3creT", expected: "s3cret"))
        #expect(!verifier.matches("s3cre", expected: "s3cret"))
        #expect(!verifier.matches("s3cret", expected: "s3cre"))
        #expect(!verifier.matches("a", expected: ""))
        #expect(!verifier.matches("", expected: "a"))
        #expect(verifier.matches("", expected: ""))
        #expect(!verifier.matches("\u{0}", expected: ""))
        #expect(verifier.matches("tök€n", expected: "tök€n"))
        let long = String(repeating: "x", count: 10_000)
        #expect(verifier.matches(long, expected: long))
        #expect(!verifier.matches(long + "y", expected: long))
    }

    @Test func eachVerifierHasItsOwnKeyAndAgreesWithTheOthers() {
        let a = TokenVerifier()
        let b = TokenVerifier()
        for (x, y) in [("tok", "tok"), ("tok", "tak"), ("", "tok")] {
            #expect(a.matches(x, expected: y) == (x == y))
            #expect(b.matches(x, expected: y) == (x == y))
        }
    }

    @Test("the codes are HMAC-SHA256 (RFC 4231 test cases 1 and 2)")
    func knownAnswers() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
        let jefe = TokenVerifier(key: Array("Jefe".utf8))
        #expect(hex(jefe.code(for: "what do ya want for nothing?")) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let twenty = TokenVerifier(key: [UInt8](repeating: 0x0b, count: 20))
        #expect(hex(twenty.code(for: "Hi There")) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }
}
