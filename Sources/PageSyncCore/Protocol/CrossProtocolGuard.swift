/// Recognizes a client speaking another protocol at the very start of a connection,
/// so the server can say so in one line and close, as it does for HTTP.
///
/// Today that is TLS: a TLS connection starts with a handshake record, whose first
/// byte is 0x16. No pagesync command starts with that byte (it is a control character).
/// Only the first byte a connection ever sends is looked at: a later line that begins with
/// 0x16 (a fuzzed or mistyped command after good ones) is left to the parser, which answers
/// it like any line holding a control character (`ERR 400`, the connection kept).
public struct CrossProtocolGuard: Equatable, Sendable {
    /// The first byte of a TLS handshake record (a ClientHello).
    public static let tlsHandshakeByte: UInt8 = 0x16

    /// The message sent (with code 400, then the connection is closed) to a TLS client.
    public static let tlsMessage = "this is a plaintext pagesync port, not TLS; connect without TLS"

    /// `ERR 400` with ``tlsMessage``, closing the connection.
    public static let tlsError = ProtocolError(code: .malformed, message: tlsMessage, closesConnection: true)

    /// Whether the connection's first byte has been looked at (nothing is looked at after it).
    public private(set) var hasLooked = false

    /// A guard for a new connection, which has sent nothing yet.
    public init() {}

    /// The verdict on the bytes of one read, in the order the connection sent them: the error
    /// to send before closing when they begin the connection and with a TLS handshake byte;
    /// nil otherwise, and for every read after the first non-empty one. An empty read decides
    /// nothing.
    public mutating func inspect(_ bytes: some Collection<UInt8>) -> ProtocolError? {
        guard !hasLooked, let first = bytes.first else { return nil }
        hasLooked = true
        return Self.check(firstByte: first)
    }

    /// The error to send for a connection whose first received byte is `firstByte`,
    /// or nil when it may be pagesync.
    public static func check(firstByte: UInt8) -> ProtocolError? {
        firstByte == tlsHandshakeByte ? tlsError : nil
    }
}
