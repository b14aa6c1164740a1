import Crypto

/// Compares a presented token with a room's token so that timing reveals neither the
/// token's content nor its length.
///
/// Both sides are first turned into HMAC-SHA256 codes under a key drawn at random when
/// the verifier is made (once per process), and the two 32-byte codes are compared in
/// constant time. The work depends on the presented token's length (which the client
/// knows anyway) and on the room token's length only through a fixed per-token cost.
struct TokenVerifier {
    private let key: SymmetricKey

    /// A verifier with a fresh random 256-bit key.
    init() {
        key = SymmetricKey(size: .bits256)
    }

    /// True iff `presented` and `expected` are the same bytes.
    func matches(_ presented: String, expected: String) -> Bool {
        let expectedCode = HMAC<SHA256>.authenticationCode(for: Array(expected.utf8), using: key)
        return HMAC<SHA256>.isValidAuthenticationCode(expectedCode, authenticating: Array(presented.utf8), using: key)
    }
}
