import Testing
@testable import PageSyncServer

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
}
