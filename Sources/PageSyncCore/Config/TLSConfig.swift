/// The TLS listener's configuration (the `tls:` section, or `--tls-*`), named after Redis's
/// `tls-*` options.
public struct TLSConfig: Equatable, Sendable {
    /// Where TLS clients connect; nil when only socket activation hands the socket over
    /// (`FileDescriptorName=pagesync-tls`).
    public var listen: ListenAddress?
    /// The server's certificate chain (PEM): leaf first, then intermediates.
    public var certificateFile: String
    /// The certificate's private key (PEM).
    public var keyFile: String
    /// When set, clients must present a certificate signed by a CA in this PEM file.
    public var clientCAFile: String?
    /// The oldest protocol accepted: "1.2" (default) or "1.3".
    public var minimumVersion: String
    /// TLS 1.2 cipher list in OpenSSL syntax; nil for the built-in modern list.
    public var ciphers: String?
    /// TLS 1.3 cipher suites in OpenSSL syntax; nil for OpenSSL's defaults.
    public var cipherSuites: String?
    /// Seconds a TLS connection may take to complete its handshake before it is closed
    /// (default ``defaultHandshakeTimeoutSeconds``); 1 to 3600.
    public var handshakeTimeoutSeconds: Int

    /// The default of ``handshakeTimeoutSeconds``: 10 s, ample for a real client on a slow
    /// network, short for a socket that connects and never completes a handshake.
    public static let defaultHandshakeTimeoutSeconds = 10

    /// The accepted values of ``minimumVersion``.
    public static let versions = ["1.2", "1.3"]

    /// Creates a TLS configuration.
    public init(listen: ListenAddress?, certificateFile: String, keyFile: String, clientCAFile: String? = nil,
                minimumVersion: String = "1.2", ciphers: String? = nil, cipherSuites: String? = nil,
                handshakeTimeoutSeconds: Int = TLSConfig.defaultHandshakeTimeoutSeconds) {
        self.listen = listen
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
        self.minimumVersion = minimumVersion
        self.ciphers = ciphers
        self.cipherSuites = cipherSuites
        self.handshakeTimeoutSeconds = handshakeTimeoutSeconds
    }

    /// The socket name systemd gives a TLS listening socket (`FileDescriptorName=`).
    public static let socketName = "pagesync-tls"
}

/// Whether `AUTH` is allowed on a connection: always over TLS or from loopback, and on other
/// plaintext connections only when the configuration explicitly allows it (tokens would cross
/// the network in clear).
public enum AuthTransportPolicy {
    /// True when a token may be presented on this connection.
    public static func allowsAuth(encrypted: Bool, loopback: Bool, plaintextAuthAllowed: Bool) -> Bool {
        encrypted || loopback || plaintextAuthAllowed
    }

    /// The refusal, `ERR 403 AUTH needs TLS on this address`.
    public static let refusal = "AUTH needs TLS on this address"
}
