import UV

/// Opens the connection to the server the pager was given: plaintext TCP, or TLS verifying the
/// server's certificate and host name (against `--tls-ca` or the system's trust store).
final class ServerConnector {
    private let server: PagerServerAddress
    private let tlsContext: TLSContext?

    /// Reads the CA file, and the client certificate and key if given, when TLS is asked for.
    /// Throws a one-line ``TLSError``.
    init(_ configuration: PagerConfiguration) throws(TLSError) {
        server = configuration.server
        if configuration.server.tls {
            tlsContext = try TLSContext.client(caFile: configuration.tlsCAFile, verifyPeer: !configuration.tlsInsecure,
                                               certificateFile: configuration.tlsCertificateFile,
                                               keyFile: configuration.tlsKeyFile)
        } else {
            tlsContext = nil
        }
    }

    /// Connects; `done` runs on the loop thread, always asynchronously. Over TLS it runs once the
    /// handshake completed, or with the certificate problem in one line.
    func connect(loop: EventLoop, _ done: @escaping (Result<any StreamConnection, UVError>) -> Void) {
        if let tlsContext {
            TLSConnection.connect(loop: loop, host: server.host, port: Int(server.port), context: tlsContext) { result in
                done(result.map { $0 })
            }
        } else {
            TCPConnection.connect(loop: loop, host: server.host, port: Int(server.port)) { result in
                done(result.map { $0 })
            }
        }
    }

    /// A connection's failure as the pager says it: when the server asked for a client
    /// certificate, which of the pager's options give one.
    static func explained(_ failure: String) -> String {
        failure.hasSuffix(TLSEngine.clientCertificateRequired) ? failure + " (use --tls-cert FILE and --tls-key FILE)" : failure
    }

    /// The warning `--tls-insecure` prints, or nil.
    static func insecureWarning(_ configuration: PagerConfiguration) -> String? {
        guard configuration.server.tls, configuration.tlsInsecure else { return nil }
        return "pagesync: WARNING: --tls-insecure: the server's certificate is NOT verified; anyone on the path can read and change this session"
    }
}
