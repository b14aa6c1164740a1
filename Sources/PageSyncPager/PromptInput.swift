/// A line being typed on the status line: a count (digits before a key), a page command (`:`),
/// a search pattern, or a filter (`&`).
package enum PagerPrompt: Equatable, Sendable {
    case count(String)
    /// `:` and the digits typed after it.
    case page(String)
    case search(forward: Bool, String)
    case filter(String)
}

/// What a key does to a prompt being typed.
package enum PromptEdit: Equatable, Sendable {
    /// Still typing (or, with nil, the prompt was closed without effect).
    case editing(PagerPrompt?)
    /// The count is complete: perform `key` with `count`.
    case countThen(Int, Key)
    /// A page command is complete: perform `action` (`:n`, `:p`, `:<n>` Enter, `:q`).
    case command(ReaderAction)
    /// A page command pagesync does not know (`:x`): say so.
    case unknownCommand(String)
    /// Enter on a search prompt: search for `pattern` (empty: repeat the last search) in `forward` direction.
    case search(pattern: String, forward: Bool)
    /// Enter on a filter prompt: show only the lines `text` selects (empty: every line again).
    case filter(String)
}

/// The pure editing rules of ``PagerPrompt``: digits extend a count (at most 12), Backspace
/// removes the last character (and closes an empty prompt), Esc closes, any other key ends a
/// count and goes to that key; `:` takes digits until Enter (page n), or one of `n` `p` `q` at
/// once (as less's `:n` `:p` `:q`); a search or filter prompt takes characters (Tab as a space)
/// until Enter.
package enum PromptInput {
    /// The effect of `key` on `prompt`.
    package static func edit(_ prompt: PagerPrompt, _ key: Key) -> PromptEdit {
        switch (prompt, key) {
        case (_, .escape):
            return .editing(nil)
        case (.count(let digits), .char(let c)) where c.isASCII && c.isNumber:
            return .editing(.count(digits.count < 12 ? digits + String(c) : digits))
        case (.count(let digits), .backspace):
            return .editing(digits.count > 1 ? .count(String(digits.dropLast())) : nil)
        case (.count(let digits), _):
            return .countThen(Int(digits) ?? 0, key)
        case (.page(let digits), .char(let c)) where c.isASCII && c.isNumber:
            return .editing(.page(digits.count < 12 ? digits + String(c) : digits))
        case (.page(let digits), .backspace):
            return .editing(digits.isEmpty ? nil : .page(String(digits.dropLast())))
        case (.page(let digits), .enter):
            return digits.isEmpty ? .editing(nil) : .command(.gotoPage(Int(digits) ?? 0))
        case (.page(""), .char("n")):
            return .command(.nextPage(1))
        case (.page(""), .char("p")):
            return .command(.previousPage(1))
        case (.page(""), .char("q")), (.page(""), .char("Q")):
            return .command(.quit)
        case (.page(let digits), _):
            return .unknownCommand(":" + digits + ReaderKeys.name(of: key))
        case (.search(let forward, let text), .enter):
            return .search(pattern: text, forward: forward)
        case (.search(let forward, let text), .backspace):
            return .editing(text.isEmpty ? nil : .search(forward: forward, String(text.dropLast())))
        case (.search(let forward, let text), .char(let c)):
            return .editing(.search(forward: forward, text + String(c)))
        case (.search(let forward, let text), .tab):
            return .editing(.search(forward: forward, text + " "))
        case (.search, _):
            return .editing(prompt)
        case (.filter(let text), .enter):
            return .filter(text)
        case (.filter(let text), .backspace):
            return .editing(text.isEmpty ? nil : .filter(String(text.dropLast())))
        case (.filter(let text), .char(let c)):
            return .editing(.filter(text + String(c)))
        case (.filter(let text), .tab):
            return .editing(.filter(text + " "))
        case (.filter, _):
            return .editing(prompt)
        }
    }
}
