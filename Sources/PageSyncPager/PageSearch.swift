/// Plain-text search within one page's lines, case-smart (a pattern without capitals ignores case).
enum PageSearch {
    /// The first line after `start` (before it, searching backward) whose plain text contains `pattern`.
    static func find(_ pattern: String, in lines: [String], after start: Int, forward: Bool) -> Int? {
        let smartCase = pattern.lowercased() == pattern
        let needle = smartCase ? pattern.lowercased() : pattern
        let candidates: [Int] = forward
            ? Array(stride(from: start + 1, to: lines.count, by: 1))
            : Array(stride(from: start - 1, through: 0, by: -1))
        for i in candidates {
            let plain = Sanitizer.plainText(lines[i])
            if (smartCase ? plain.lowercased() : plain).contains(needle) { return i }
        }
        return nil
    }
}
