import COpenSSL

/// One TLS session as a pure transform over byte buffers: OpenSSL reads and writes through a
/// BIO over two Swift arrays (``TLSBufferPair``, released whenever empty, so an idle session holds
/// no buffer of ours), so nothing here touches a socket, blocks or spawns a thread. Feed received ciphertext with
/// ``receive(_:)``, pull plaintext with ``read(into:deliver:)``, hand plaintext to ``send(_:)``,
/// and transmit what ``takeOutput(_:)`` yields. Plaintext sent before the handshake completes
/// waits inside (``pendingPlaintextCount``) and is encrypted the moment it completes.
///
/// Not thread-safe: use one engine from one thread (the loop thread, for ``TLSConnection``).
public final class TLSEngine {
    /// Where the session stands.
    public enum State: Equatable, Sendable {
        /// Handshake messages are being exchanged.
        case handshaking
        /// Application data flows both ways.
        case established
        /// The peer sent close_notify, or ``shutdown()`` was called. After the peer's close_notify
        /// (and until ``shutdown()``) plaintext is still sent: see ``send(_:)``.
        case closed
        /// A fatal error; see ``failure``.
        case failed
    }

    /// What ``read(into:deliver:)`` stopped on.
    public enum ReadOutcome: Equatable, Sendable {
        /// Everything received so far was consumed: more ciphertext is needed.
        case needsInput
        /// `deliver` returned false: unread data stays inside for a later call.
        case paused
        /// The peer closed the TLS session (close_notify): no more plaintext follows.
        case peerClosed
        /// The session failed (bad handshake, bad record, certificate refused); see ``failure``.
        case failed(TLSError)
    }

    private let ssl: OpaquePointer
    private let buffers: TLSBufferPair
    private var pending: [UInt8] = []
    /// True for the accepting side.
    public let isServer: Bool
    /// The current state.
    public private(set) var state: State = .handshaking
    /// The error that failed the session, once ``state`` is `.failed`.
    public private(set) var failure: TLSError?
    private let expectedHost: String?
    /// Whether the peer's certificate is verified (not for a `--tls-insecure` client).
    private let verifiesPeer: Bool
    /// The peer sent close_notify and ``shutdown()`` was not called yet: the peer's half is
    /// closed, ours is not (a half-close, as with TCP: `printf 'next\n' | socat - OPENSSL:...`
    /// sends its line and close_notify, then reads the reply).
    private var peerClosedFirst = false

    /// A session using `context`. A client context needs `serverName`: the host name (or IP
    /// literal) the certificate must match, also sent as SNI when it is a name. A client engine
    /// has its ClientHello ready in ``takeOutput(_:)`` right away.
    public convenience init(context: TLSContext, serverName: String? = nil) throws(TLSError) {
        try self.init(context: context, serverName: serverName, outputScratch: nil)
    }

    /// As ``init(context:serverName:)``; the output goes to `outputScratch` when it is free
    /// (see ``TLSOutputScratch``).
    package init(context: TLSContext, serverName: String?, outputScratch: TLSOutputScratch?) throws(TLSError) {
        buffers = TLSBufferPair(scratch: outputScratch)
        ERR_clear_error()
        guard let ssl = SSL_new(context.raw) else { throw .openSSL("cannot create a TLS session") }
        guard let bio = TLSBufferBIO.make(buffers) else {
            SSL_free(ssl)
            throw .openSSL("cannot create TLS buffers")
        }
        SSL_set_bio(ssl, bio, bio)  // one BIO reads and writes; the SSL owns it from here on
        self.ssl = ssl
        self.isServer = context.isServer
        self.verifiesPeer = context.verifiesPeer
        self.expectedHost = serverName
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName {
                if Self.isIPLiteral(serverName) {
                    let param = SSL_get0_param(ssl)
                    if context.verifiesPeer && X509_VERIFY_PARAM_set1_ip_asc(param, serverName) != 1 {
                        throw .openSSL("cannot verify IP address \(serverName)")
                    }
                } else {
                    _ = pagesync_SSL_set_tlsext_host_name(ssl, serverName)
                    if context.verifiesPeer && SSL_set1_host(ssl, serverName) != 1 {
                        throw .openSSL("cannot verify host name \(serverName)")
                    }
                }
            }
            advanceHandshake()
        }
    }

    deinit { SSL_free(ssl) }

    static func isIPLiteral(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
    }

    /// Plaintext handed to ``send(_:)`` that waits for the handshake, in bytes.
    public var pendingPlaintextCount: Int { pending.count }

    /// Encrypted bytes ready to transmit, in bytes.
    public var outputCount: Int { buffers.outputCount }

    /// Bytes of buffer storage the engine itself holds for ciphertext (received but unread, or
    /// produced but not taken). 0 whenever both are empty: an idle session keeps no buffer.
    public var bufferCapacity: Int { buffers.capacity }

    /// True when received data has not been turned into plaintext yet (after a `.paused` read).
    public var hasUnreadInput: Bool { buffers.unreadCount > 0 || SSL_pending(ssl) > 0 }

    /// The negotiated protocol, e.g. "TLSv1.3" (meaningful once established).
    public var protocolVersion: String { String(cString: pagesync_SSL_get_version_name(ssl)) }

    /// Stores received ciphertext (copied). Call ``read(into:deliver:)`` next.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, ciphertext.count > 0, state == .handshaking || state == .established else { return }
        buffers.receive(UnsafeRawBufferPointer(start: base, count: ciphertext.count))
    }

    /// Advances the handshake and decrypts what was received, handing each piece of plaintext to
    /// `deliver` (the bytes live in `scratch`, valid only during the call). `deliver` returns
    /// false to stop early. Handshake replies and alerts land in the output.
    public func read(into scratch: UnsafeMutableRawBufferPointer,
                     deliver: (UnsafeRawBufferPointer) -> Bool) -> ReadOutcome {
        if state == .handshaking {
            advanceHandshake()
        }
        switch state {
        case .handshaking: return .needsInput
        case .closed: return .peerClosed
        case .failed: return .failed(failure ?? TLSError("TLS failed"))
        case .established: break
        }
        while true {
            ERR_clear_error()
            let count = SSL_read(ssl, scratch.baseAddress, Int32(min(scratch.count, Int(Int32.max))))
            if count > 0 {
                if !deliver(UnsafeRawBufferPointer(start: scratch.baseAddress, count: Int(count))) {
                    return .paused
                }
                // Nothing received is left, in the buffers or inside OpenSSL: another SSL_read
                // would only say "want read" (and, with released buffers, allocate and free a
                // read buffer to say it).
                if buffers.unreadCount == 0 && SSL_has_pending(ssl) == 0 { return .needsInput }
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return .needsInput
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                peerClosedFirst = true
                return .peerClosed
            default:
                return .failed(fail(isServer ? .openSSL("TLS error") : Self.describeServerAlert(.openSSL("TLS error"))))
            }
        }
    }

    /// Advances the handshake with what was received, without reading application data.
    /// Returns the error when the handshake failed, nil otherwise (see ``state``).
    @discardableResult
    public func continueHandshake() -> TLSError? {
        if state == .handshaking { advanceHandshake() }
        return state == .failed ? failure : nil
    }

    /// Encrypts `plaintext` into the output, or keeps a copy until the handshake completes.
    /// Ignored once failed or after ``shutdown()``; after the peer's close_notify it is still
    /// sent (the replies to what the peer sent before closing its half).
    public func send(_ plaintext: UnsafeRawBufferPointer) {
        guard plaintext.count > 0 else { return }
        switch state {
        case .handshaking: pending.append(contentsOf: plaintext)
        case .established: encrypt(plaintext)
        case .closed: if peerClosedFirst { encrypt(plaintext) }
        case .failed: break
        }
    }

    /// Hands the encrypted bytes waiting to be transmitted to `body` (valid only during the call)
    /// and forgets them. Does nothing when there are none.
    public func takeOutput(_ body: (UnsafeRawBufferPointer) -> Void) {
        buffers.takeOutput(body)
    }

    /// Sends close_notify (into the output; also in answer to the peer's) and stops accepting
    /// plaintext. Idempotent.
    public func shutdown() {
        guard state == .established || state == .handshaking || peerClosedFirst else { return }
        if state == .established || peerClosedFirst {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
        }
        peerClosedFirst = false
        state = .closed
        pending = []
    }

    private func encrypt(_ plaintext: UnsafeRawBufferPointer) {
        // No ERR_clear_error() first (it costs as much as a small record's cipher setup): the
        // result is not passed to SSL_get_error, and on failure the newest error on the queue,
        // the one named, is SSL_write's own.
        // The buffer BIO never refuses bytes, so one SSL_write takes everything.
        let written = SSL_write(ssl, plaintext.baseAddress, Int32(plaintext.count))
        if written <= 0 { _ = fail(.openSSL("TLS write failed")) }
    }

    private func advanceHandshake() {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .established
            if !pending.isEmpty {
                let waiting = pending
                pending = []
                waiting.withUnsafeBytes { encrypt($0) }
            }
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        default:
            _ = fail(handshakeError())
        }
    }

    /// The clearest one-line account of a failed handshake.
    private func handshakeError() -> TLSError {
        // A client that does not verify (`--tls-insecure`) still gets a verification result;
        // it is not why that client's handshake failed.
        let verify = SSL_get_verify_result(ssl)
        if verify != Int(X509_V_OK) && (isServer || verifiesPeer) {
            ERR_clear_error()
            if isServer {
                // OpenSSL's own words are "certificate verify failed", whatever the reason.
                return TLSError("TLS handshake failed: \(Self.describeClientVerification(Int32(verify)))")
            }
            return TLSError(Self.describeVerification(Int32(verify), host: expectedHost))
        }
        return isServer ? .openSSL("TLS handshake failed") : Self.describeServerAlert(.openSSL("TLS handshake failed"))
    }

    /// What a client's failure says when the server asked for a client certificate and got none.
    public static let clientCertificateRequired = "the server asks for a client certificate"

    /// A client's failure in words a user acts on, when it is the server's alert about the
    /// client's certificate (none given, or one the server refused); any other error as it is.
    /// With TLS 1.3 such an alert arrives after the client finished its handshake, on the first
    /// read.
    public static func describeServerAlert(_ error: TLSError) -> TLSError {
        // (The pager adds which of its options give a certificate: ``clientCertificateRequired``.)
        guard let reason = error.reason else { return error }
        switch reason {
        case "tlsv13 alert certificate required":
            return TLSError(clientCertificateRequired, reason: reason)
        case "tlsv1 alert unknown ca":
            return TLSError("the server does not trust this client certificate (its CA is not one the server knows)", reason: reason)
        case "sslv3 alert certificate expired":
            return TLSError("the server refused this client certificate: it, or a certificate in its chain, has expired", reason: reason)
        case "sslv3 alert bad certificate", "sslv3 alert certificate unknown", "sslv3 alert unsupported certificate",
            "sslv3 alert certificate revoked":
            return TLSError("the server refused this client certificate (\(reason))", reason: reason)
        default:
            return error
        }
    }

    /// A client certificate's verification result (`X509_V_ERR_*`), for the server's log.
    static func describeClientVerification(_ code: Int32) -> String {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return "client certificate has expired"
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return "client certificate is not valid yet (check the clock)"
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return "client certificate is not signed by a trusted CA (the server's CA file)"
        default:
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "code \(code)"
            return "client certificate refused: \(text)"
        }
    }

    /// A certificate verification result (`X509_V_ERR_*`) in words a user acts on; `host` is the
    /// name that was expected.
    public static func describeVerification(_ code: Int32, host: String?) -> String {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return "certificate has expired"
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return "certificate is not valid yet (check the clock)"
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return "certificate is not for \(host ?? "this host") (wrong host name)"
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return "certificate is signed by an unknown CA (use --tls-ca FILE)"
        case X509_V_ERR_CERT_REVOKED:
            return "certificate has been revoked"
        default:
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "code \(code)"
            return "certificate refused: \(text)"
        }
    }

    private func fail(_ error: TLSError) -> TLSError {
        if state != .failed {
            state = .failed
            failure = error
            pending = []
        }
        return failure ?? error
    }
}
