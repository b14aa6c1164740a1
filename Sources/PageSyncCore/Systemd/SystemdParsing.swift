/// Small parsing helpers shared by the systemd environment readers.
enum SystemdParsing {
    /// Strict decimal: one or more ASCII digits, nothing else (no sign, no blanks),
    /// and no overflow of `Int`. Returns nil otherwise.
    static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty,
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text)
    }

    /// Like ``decimal(_:)`` for unsigned 64-bit values (microsecond counts).
    static func unsignedDecimal(_ text: String) -> UInt64? {
        guard !text.isEmpty,
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(text)
    }
}
