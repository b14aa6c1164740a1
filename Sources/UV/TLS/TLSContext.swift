import COpenSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The oldest TLS version a context accepts.
public enum TLSProtocolVersion: String, Sendable, CaseIterable {
    /// TLS 1.2 (the default floor).
    case v1_2 = "1.2"
    /// TLS 1.3.
    case v1_3 = "1.3"

    var openSSLValue: Int32 {
        switch self {
        case .v1_2: pagesync_TLS1_2_VERSION
        case .v1_3: pagesync_TLS1_3_VERSION
        }
    }
}

/// A TLS failure, said in one line ("certificate has expired", "cannot read key /x: ...").
public struct TLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var message: String
    /// OpenSSL's own reason, when it gave one ("tlsv13 alert certificate required").
    public var reason: String?
    /// Creates an error with its one-line explanation and OpenSSL's reason.
    public init(_ message: String, reason: String? = nil) {
        self.message = message
        self.reason = reason
    }
    /// The message.
    public var description: String { message }

    /// The oldest OpenSSL error on this thread's queue as text (the queue is cleared), or
    /// `fallback`. The oldest is the cause ("no start line", "No such file or directory");
    /// the newer ones wrap it ("PEM lib", "system lib").
    static func openSSL(_ fallback: String) -> TLSError {
        var oldest: UInt = 0
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if oldest == 0 { oldest = code }
        }
        guard oldest != 0 else { return TLSError(fallback) }
        if let reason = ERR_reason_error_string(oldest) {
            let text = String(cString: reason)
            // OpenSSL's words for a file without "-----BEGIN ...", said so a user knows what to fix.
            return TLSError("\(fallback): \(text == "no start line" ? "not a PEM file (no -----BEGIN line)" : text)", reason: text)
        }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(oldest, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return TLSError("\(fallback): \(text)")
    }
}

/// The modern defaults for TLS 1.2 cipher suites: forward secret AEAD only
/// (Mozilla's "intermediate" list). TLS 1.3 suites are OpenSSL's defaults.
public let defaultTLSCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/// An OpenSSL `SSL_CTX`: certificate, key and verification settings shared by many connections.
///
/// Immutable once created, so it is `Sendable` (OpenSSL contexts are safe to share between
/// threads once configured); build a new one to change certificates. Connections made from a
/// context keep it alive (OpenSSL counts references), so replacing it never affects them.
public final class TLSContext: @unchecked Sendable {
    let raw: OpaquePointer
    /// True for a server context (accepts), false for a client context (connects).
    public let isServer: Bool
    /// False only for a client context made with `verifyPeer: false` (`--tls-insecure`).
    public let verifiesPeer: Bool
    /// For a server context whose certificate has expired: when ("not after 2026-11-25 11:55
    /// UTC"); nil while it is valid. Clients that verify refuse it ("certificate has expired").
    public private(set) var expiry: String?

    private init(raw: OpaquePointer, isServer: Bool, verifiesPeer: Bool) {
        self.raw = raw
        self.isServer = isServer
        self.verifiesPeer = verifiesPeer
    }

    deinit { SSL_CTX_free(raw) }

    /// A server context presenting the PEM certificate chain `certificateFile` with the PEM
    /// private key `keyFile`. With `clientCAFile`, clients must present a certificate signed by
    /// one of its CAs. `ciphers` are the TLS 1.2 suites (OpenSSL syntax, default
    /// ``defaultTLSCiphers``), `cipherSuites` the TLS 1.3 ones (default: OpenSSL's).
    /// Idle connections release their buffers (`SSL_MODE_RELEASE_BUFFERS`); renegotiation,
    /// compression and session tickets are off.
    ///
    /// Reads the files (blocking). Throws a ``TLSError`` naming the file and the problem.
    public static func server(
        certificateFile: String, keyFile: String, clientCAFile: String? = nil,
        minimumVersion: TLSProtocolVersion = .v1_2, ciphers: String? = nil, cipherSuites: String? = nil
    ) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw .openSSL("cannot create a TLS context") }
        let context = TLSContext(raw: ctx, isServer: true, verifiesPeer: clientCAFile != nil)
        try context.configureCommon(minimumVersion: minimumVersion, ciphers: ciphers, cipherSuites: cipherSuites)
        _ = pagesync_SSL_CTX_set_options(ctx, pagesync_SSL_OP_CIPHER_SERVER_PREFERENCE)
        _ = pagesync_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_OFF))
        _ = SSL_CTX_set_num_tickets(ctx, 0)
        try context.use(certificateFile: certificateFile, keyFile: keyFile)
        if let clientCAFile {
            try checkReadable(clientCAFile, what: "CA file")
            guard SSL_CTX_load_verify_locations(ctx, clientCAFile, nil) == 1 else {
                throw .openSSL("cannot use CA file \(clientCAFile)")
            }
            if let names = SSL_load_client_CA_file(clientCAFile) { SSL_CTX_set_client_CA_list(ctx, names) }
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        if let leaf = SSL_CTX_get0_certificate(ctx), let notAfter = X509_get0_notAfter(leaf),
            X509_cmp_current_time(notAfter) < 0 {
            context.expiry = "not after \(describe(notAfter))"
        }
        return context
    }

    /// An ASN.1 time as "2026-11-25 11:55 UTC".
    private static func describe(_ time: UnsafePointer<ASN1_TIME>) -> String {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return "an unreadable date" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }

    /// A client context that verifies the server's certificate against `caFile` (PEM) or, when
    /// nil, the system's trust store. With `verifyPeer: false` nothing is verified (testing only).
    /// `certificateFile` and `keyFile` give a client certificate; `maximumVersion` caps the
    /// protocol (tests of the server's floor).
    public static func client(
        caFile: String? = nil, verifyPeer: Bool = true, certificateFile: String? = nil, keyFile: String? = nil,
        minimumVersion: TLSProtocolVersion = .v1_2, maximumVersion: TLSProtocolVersion? = nil
    ) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw .openSSL("cannot create a TLS context") }
        let context = TLSContext(raw: ctx, isServer: false, verifiesPeer: verifyPeer)
        try context.configureCommon(minimumVersion: minimumVersion, ciphers: nil, cipherSuites: nil)
        if let maximumVersion, pagesync_SSL_CTX_set_max_proto_version(ctx, maximumVersion.openSSLValue) != 1 {
            throw .openSSL("cannot set the maximum TLS version \(maximumVersion.rawValue)")
        }
        switch (certificateFile, keyFile) {
        case let (certificateFile?, keyFile?): try context.use(certificateFile: certificateFile, keyFile: keyFile)
        case (nil, nil): break
        case (_?, nil): throw TLSError("a client certificate needs its key")
        case (nil, _?): throw TLSError("a client key needs its certificate")
        }
        if verifyPeer {
            if let caFile {
                try checkReadable(caFile, what: "CA file")
                guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
                    throw .openSSL("cannot use CA file \(caFile)")
                }
            } else if SSL_CTX_set_default_verify_paths(ctx) != 1 {
                throw .openSSL("cannot load the system's trusted certificates")
            }
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        }
        return context
    }

    /// Presents the PEM certificate chain `certificateFile` with its PEM private key `keyFile`
    /// (a server's certificate, or a client's). Each problem is said in one line naming the file.
    private func use(certificateFile: String, keyFile: String) throws(TLSError) {
        try Self.checkReadable(certificateFile, what: "certificate")
        try Self.checkReadable(keyFile, what: "key")
        guard SSL_CTX_use_certificate_chain_file(raw, certificateFile) == 1 else {
            throw .openSSL("cannot use certificate \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(raw, keyFile, SSL_FILETYPE_PEM) == 1 else {
            let error = TLSError.openSSL("cannot use key \(keyFile)")
            if error.reason == "key values mismatch" {
                throw TLSError("key \(keyFile) does not match certificate \(certificateFile)")
            }
            throw error
        }
        guard SSL_CTX_check_private_key(raw) == 1 else {
            throw .openSSL("key \(keyFile) does not match certificate \(certificateFile)")
        }
    }

    private func configureCommon(minimumVersion: TLSProtocolVersion, ciphers: String?, cipherSuites: String?) throws(TLSError) {
        guard pagesync_SSL_CTX_set_min_proto_version(raw, minimumVersion.openSSLValue) == 1 else {
            throw .openSSL("cannot set the minimum TLS version \(minimumVersion.rawValue)")
        }
        _ = pagesync_SSL_CTX_set_mode(raw, pagesync_SSL_MODE_RELEASE_BUFFERS)
        _ = pagesync_SSL_CTX_set_options(raw, pagesync_SSL_OP_NO_RENEGOTIATION | pagesync_SSL_OP_NO_COMPRESSION)
        guard SSL_CTX_set_cipher_list(raw, ciphers ?? defaultTLSCiphers) == 1 else {
            throw .openSSL("bad TLS 1.2 cipher list \"\(ciphers ?? defaultTLSCiphers)\"")
        }
        if let cipherSuites, SSL_CTX_set_ciphersuites(raw, cipherSuites) != 1 {
            throw .openSSL("bad TLS 1.3 cipher suites \"\(cipherSuites)\"")
        }
    }

    /// Throws a one-line error (with `strerror`) when `path` cannot be opened for reading.
    private static func checkReadable(_ path: String, what: String) throws(TLSError) {
        guard let file = fopen(path, "r") else {
            throw TLSError("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        fclose(file)
    }
}
