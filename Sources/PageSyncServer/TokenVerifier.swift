import COpenSSL

/// Compares a presented token with a room's token so that timing reveals neither the
/// token's content nor its length.
///
/// Both sides are first turned into HMAC-SHA256 codes under a key drawn at random when
/// the verifier is made (once per process), and the two 32-byte codes are compared in
/// constant time (`CRYPTO_memcmp`). The work depends on the presented token's length
/// (which the client knows anyway) and on the room token's length only through a fixed
/// per-token cost.
///
/// OpenSSL (already linked for TLS) computes the codes: swift-crypto would add BoringSSL,
/// about 1 MB of the installed daemon and a third of a clean build, for this one use.
package struct TokenVerifier: Sendable {
    /// The length of an HMAC-SHA256 code.
    private static let codeLength = 32
    private let key: [UInt8]

    /// A verifier with a fresh random 256-bit key from OpenSSL's CSPRNG (getrandom).
    package init() {
        var key = [UInt8](repeating: 0, count: 32)
        let drawn = key.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(drawn == 1, "OpenSSL could not draw a random key (RAND_bytes)")
        self.key = key
    }

    /// A verifier with a given key (for known-answer tests).
    package init(key: [UInt8]) {
        self.key = key
    }

    /// True iff `presented` and `expected` are the same bytes.
    package func matches(_ presented: String, expected: String) -> Bool {
        let expectedCode = code(for: expected)
        let presentedCode = code(for: presented)
        return expectedCode.withUnsafeBytes { e in
            presentedCode.withUnsafeBytes { p in CRYPTO_memcmp(e.baseAddress, p.baseAddress, Self.codeLength) == 0 }
        }
    }

    /// HMAC-SHA256 of `text`'s UTF-8 bytes under the key: 32 bytes.
    package func code(for text: String) -> [UInt8] {
        // One byte more than the text, so the data pointer is never nil (an empty token too).
        let data = Array(text.utf8) + [0]
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { k in
            data.withUnsafeBufferPointer { d in
                code.withUnsafeMutableBufferPointer { c in
                    HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count - 1, c.baseAddress, &length)
                }
            }
        }
        precondition(done != nil && Int(length) == Self.codeLength, "OpenSSL HMAC-SHA256 failed")
        return Array(code.prefix(Self.codeLength))
    }
}
