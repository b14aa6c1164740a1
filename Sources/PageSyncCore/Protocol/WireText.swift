/// Text that may hold spaces or any character, carried as one `key=value` field: every byte
/// outside `A-Z a-z 0-9 . _ - + ~ , @` as `%XX` (uppercase hex), as `file=` and `title=` are.
public enum WireText {
    /// `text` with every byte outside the plain set percent-encoded (`My Talk` is `My%20Talk`).
    public static func percentEncoded(_ text: some StringProtocol) -> String {
        let digits = Array("0123456789ABCDEF")
        var out = ""
        for byte in text.utf8 {
            if isPlain(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
            }
        }
        return out
    }

    /// The text a field holds: each `%XX` (hex, either case) as its byte; a `%` not followed by
    /// two hex digits is kept as it is, and bytes that are not UTF-8 become U+FFFD.
    public static func percentDecoded(_ field: some StringProtocol) -> String {
        let bytes = Array(field.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "~"),
             UInt8(ascii: ","), UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
