import PageSyncCore

/// What the notes view shows of the next page: its first heading, or its first line with text.
package enum PageHeadline {
    /// The first markdown heading (`# Title`, or a line underlined with `===`/`---`) when
    /// `markdown`, else the first line that is not blank; sanitized to plain text. Nil for a
    /// page with no text.
    package static func of(_ lines: [String], markdown: Bool) -> String? {
        if markdown {
            for (i, line) in lines.enumerated() {
                let trimmed = line.drop { $0 == " " }
                if trimmed.hasPrefix("#"), line.count - trimmed.count < 4 {
                    let hashes = trimmed.prefix { $0 == "#" }
                    let rest = trimmed.dropFirst(hashes.count)
                    if hashes.count <= 6, rest.isEmpty || rest.first == " " || rest.first == "\t" {
                        let text = clean(String(rest.reversed().drop { $0 == "#" || $0 == " " }.reversed()))
                        if !text.isEmpty { return text }
                    }
                }
                if i + 1 < lines.count, isSetextUnderline(lines[i + 1]), !clean(line).isEmpty,
                   !line.hasPrefix("    ") {
                    return clean(line)
                }
            }
        }
        for line in lines {
            let text = clean(line)
            if !text.isEmpty { return text }
        }
        return nil
    }

    private static func isSetextUnderline(_ line: String) -> Bool {
        let t = line.trimmingBlanks
        guard let first = t.first, first == "=" || first == "-" else { return false }
        return t.allSatisfy { $0 == first }
    }

    private static func clean(_ line: String) -> String {
        Sanitizer.plainText(line).trimmingBlanks
    }
}
