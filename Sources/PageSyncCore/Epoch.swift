/// The identity of a room's history. Versions grow by one per change and never go back
/// *within an epoch*; a new epoch means the server could not prove it still holds the last
/// state it acknowledged, so a client must adopt the room's state even if its version is
/// lower than one it has seen. On the wire: 16 lowercase hex digits (`epoch=3f9a...`).
public struct Epoch: Hashable, Sendable, CustomStringConvertible {
    /// The 64-bit id.
    public let value: UInt64

    /// The epoch with this id.
    public init(_ value: UInt64) { self.value = value }

    /// A new random epoch (never 0, which marks "unknown" in tests and old records).
    public static func random() -> Epoch {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    /// A new random epoch drawn from `generator` (never 0).
    public static func random(using generator: inout some RandomNumberGenerator) -> Epoch {
        Epoch(UInt64.random(in: 1...UInt64.max, using: &generator))
    }

    /// Parses 1 to 16 hex digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        guard (1...16).contains(hex.utf8.count), let v = UInt64(hex, radix: 16),
            hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
        else { return nil }
        value = v
    }

    /// 16 lowercase hex digits.
    public var description: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
