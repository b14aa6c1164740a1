/// Where `pagesync` takes a presenter room's control token from, so that it need not show in `ps`.
///
/// In order: `--token -` (a prompt without echo), `--token VALUE` (visible to other users in
/// `ps`; kept for scripts), `--token-file PATH`, then the `PAGESYNC_TOKEN` environment variable.
/// `--token` and `--token-file` together are an error.
public enum TokenSource: Equatable, Sendable {
    /// No token: no `AUTH` is sent.
    case none
    /// The token itself (from `--token VALUE` or ``environmentVariable``).
    case value(String)
    /// Read the token from this file (its first line).
    case file(String)
    /// Ask for it on the terminal, without echo.
    case prompt

    /// The environment variable that holds a token when no option gives one.
    public static let environmentVariable = "PAGESYNC_TOKEN"

    /// The source the options and the environment ask for, or a one-line error.
    public static func choose(token: String?, tokenFile: String?,
                              environment: [String: String]) -> Result<TokenSource, TokenError> {
        switch (token, tokenFile) {
        case (.some, .some):
            return .failure(TokenError("give either --token or --token-file, not both"))
        case (.some("-"), nil):
            return .success(.prompt)
        case (.some(let value), nil):
            return check(value, source: "--token").map { .value($0) }
        case (nil, .some(let path)):
            guard !path.isEmpty else { return .failure(TokenError("--token-file: the path is empty")) }
            return .success(.file(path))
        case (nil, nil):
            guard let value = environment[environmentVariable], !value.isEmpty else { return .success(.none) }
            return check(value, source: environmentVariable).map { .value($0) }
        }
    }

    /// The token in a token file's bytes: the first line, without its line ending.
    public static func token(fromFile bytes: [UInt8], path: String) -> Result<String, TokenError> {
        var line = bytes.prefix { $0 != 0x0A }
        if line.last == 0x0D { line = line.dropLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            return .failure(TokenError("--token-file \(path): the token is not UTF-8 text"))
        }
        return check(text, source: "--token-file \(path)")
    }

    /// A token typed at the prompt, without its line ending.
    public static func token(typed text: String) -> Result<String, TokenError> {
        var t = Substring(text)
        while let l = t.last, l == "\n" || l == "\r" { t = t.dropLast() }
        return check(String(t), source: "the token prompt")
    }

    /// A token is one word of printable characters (it goes on an `AUTH` line).
    static func check(_ token: String, source: String) -> Result<String, TokenError> {
        if token.isEmpty { return .failure(TokenError("\(source): the token is empty")) }
        if token.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return .failure(TokenError("\(source): the token contains spaces or control characters"))
        }
        return .success(token)
    }
}

/// Why no token could be had, as one line for stderr.
public struct TokenError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line to show.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
