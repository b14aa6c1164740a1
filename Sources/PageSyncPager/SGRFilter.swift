/// How much of a document's styling reaches the terminal.
public enum ColorPolicy: Equatable, Sendable {
    /// Colours and styles pass (blinking and concealed text never do).
    case full
    /// `NO_COLOR` is set: styles such as bold and underline pass, colours do not.
    case noColor
    /// `TERM=dumb`: no SGR sequence at all, and the status line is not drawn in reverse video.
    case none

    /// The policy for an environment: `TERM=dumb` is ``none``; a non-empty `NO_COLOR`
    /// (see no-color.org) is ``noColor``; otherwise ``full``.
    public static func from(noColor: String?, term: String?) -> ColorPolicy {
        if term == "dumb" { return .none }
        if let noColor, !noColor.isEmpty { return .noColor }
        return .full
    }
}

/// Rewrites the parameters of one SGR sequence (`ESC [ params m`) under a ``ColorPolicy``.
///
/// Blink (5, 6) and conceal (8) are always removed, so blinking and hidden text never reach
/// the terminal (the text shows, plainly). Under ``ColorPolicy/noColor`` every colour is removed
/// (30-39, 40-49, 90-97, 100-107, and 38/48/58 with their `5;n` or `2;r;g;b` arguments, 59).
/// Extended colour arguments are never mistaken for attributes (`38;5;5` is a colour, not blink).
enum SGRFilter {
    /// The parameters to keep (nil: drop the whole sequence; "" stays "", a reset).
    static func filter(_ params: String, policy: ColorPolicy) -> String? {
        if policy == .none { return nil }
        if params.isEmpty { return params }
        let tokens = params.split(separator: ";", omittingEmptySubsequences: false)
        var kept: [Substring] = []
        var i = 0
        while i < tokens.count {
            let token = tokens[i]
            let head = token.split(separator: ":", omittingEmptySubsequences: false).first ?? ""
            let code = Int(head.isEmpty ? "0" : head) ?? -1
            var group = [token]
            if (code == 38 || code == 48 || code == 58) && !token.contains(":") {
                // 38;5;n or 38;2;r;g;b: the arguments belong to this one.
                let kind = i + 1 < tokens.count ? Int(tokens[i + 1]) : nil
                let extra = kind == 5 ? 2 : kind == 2 ? 4 : 1
                group = Array(tokens[i..<min(tokens.count, i + 1 + extra)])
                i += group.count
            } else {
                i += 1
            }
            let isColour = (30...49).contains(code) || code == 58 || code == 59
                || (90...97).contains(code) || (100...107).contains(code)
            if code == 5 || code == 6 || code == 8 { continue }
            if isColour && policy == .noColor { continue }
            kept += group
        }
        return kept.isEmpty ? nil : kept.joined(separator: ";")
    }
}

/// Turns backspace overstrike (the bold and underline of `man` and nroff output) into SGR, as
/// less does: `X BS X` is bold X, `_ BS X` and `X BS _` are underlined X, any other `A BS B`
/// shows B. Runs are wrapped in `ESC[1m` … `ESC[22m` and `ESC[4m` … `ESC[24m`.
package enum Overstrike {
    /// `line` with overstrike turned into SGR sequences; other backspaces are left alone.
    package static func render(_ line: some StringProtocol) -> String {
        let chars = Array(line)
        guard chars.contains("\u{08}") else { return String(line) }
        var out = ""
        var bold = false
        var underline = false
        func set(bold b: Bool, underline u: Bool) {
            if bold != b { out += b ? "\u{1B}[1m" : "\u{1B}[22m"; bold = b }
            if underline != u { out += u ? "\u{1B}[4m" : "\u{1B}[24m"; underline = u }
        }
        var i = 0
        while i < chars.count {
            var glyph = chars[i]
            var isBold = false
            var isUnderline = false
            var j = i
            // A glyph, then any number of "BS glyph" overstrikes of it.
            while glyph != "\u{08}", j + 2 < chars.count, chars[j + 1] == "\u{08}", chars[j + 2] != "\u{08}" {
                let next = chars[j + 2]
                if next == glyph { isBold = true }
                else if glyph == "_" { isUnderline = true; glyph = next }
                else if next == "_" { isUnderline = true }
                else { glyph = next }
                j += 2
            }
            if j == i {
                set(bold: false, underline: false)
                out.append(chars[i])
                i += 1
                continue
            }
            set(bold: isBold, underline: isUnderline)
            out.append(glyph)
            i = j + 1
        }
        set(bold: false, underline: false)
        return out
    }
}
