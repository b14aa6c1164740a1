/// Which Unicode scalars are control characters, and how replies keep them out.
///
/// A control character is C0 (U+0000–U+001F), DEL (U+007F) or C1 (U+0080–U+009F).
/// A terminal may act on any of them (C1 includes CSI, U+009B, on terminals that read
/// 8-bit controls), so the server never sends one inside a reply line.
public enum ControlCharacters {
    /// True for C0, DEL and C1.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (0x7F...0x9F).contains(v)
    }

    /// `0x1B` for a C0 character or DEL (as bytes on the wire), `U+0085` for a C1 character.
    public static func describe(_ scalar: Unicode.Scalar) -> String {
        let v = scalar.value
        if v < 0x80 {
            let hex = String(v, radix: 16, uppercase: true)
            return "0x" + (hex.count < 2 ? "0" + hex : hex)
        }
        let hex = String(v, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// `text` with every control character replaced by a space (tabs too, unless `keepingTabs`).
    /// Invalid UTF-8 cannot occur in a `String`; the result holds no control character but
    /// the tabs kept, so no LF or CR.
    public static func replacingControls(_ text: String, keepingTabs: Bool = false) -> String {
        func replaced(_ scalar: Unicode.Scalar) -> Bool { isControl(scalar) && !(keepingTabs && scalar == "\t") }
        guard text.unicodeScalars.contains(where: replaced) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(replaced(scalar) ? " " : scalar) }
        return String(out)
    }
}
