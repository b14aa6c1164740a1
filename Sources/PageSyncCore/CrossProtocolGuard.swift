/// Recognizes a client speaking another protocol at the very start of a connection,
/// so the server can say so in one line and close, as it does for HTTP.
///
/// Today that is TLS: a TLS connection starts with a handshake record, whose first
/// byte is 0x16. No pagesync command starts with that byte (it is a control character).
public enum CrossProtocolGuard {
    /// The first byte of a TLS handshake record (a ClientHello).
    public static let tlsHandshakeByte: UInt8 = 0x16

    /// The message sent (with code 400, then the connection is closed) to a TLS client.
    public static let tlsMessage = "this is a plaintext pagesync port, not TLS; connect without TLS"

    /// `ERR 400` with ``tlsMessage``, closing the connection.
    public static let tlsError = ProtocolError(code: .malformed, message: tlsMessage, closesConnection: true)

    /// The error to send for a connection whose first received byte is `firstByte`,
    /// or nil when it may be pagesync.
    public static func check(firstByte: UInt8) -> ProtocolError? {
        firstByte == tlsHandshakeByte ? tlsError : nil
    }
}
