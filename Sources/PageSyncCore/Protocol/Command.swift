/// The numeric code of an `ERR` reply, as listed in PROTOCOL.md.
public enum ErrorCode: Int, Sendable, CaseIterable {
    /// 400: malformed input (empty line, unknown verb, bad arguments, bad number, NUL, a control
    /// character, invalid UTF-8, HTTP, TLS).
    case malformed = 400
    /// 403: not allowed (navigation without control in a presenter room, wrong token, `AUTH` on
    /// a plaintext connection from another machine).
    case forbidden = 403
    /// 404: no such page or room.
    case notFound = 404
    /// 409: an `IF <version>` did not match the room's version, or a name is in use in the room
    /// (`NAME`, `JOIN`).
    case conflict = 409
    /// 413: the line was longer than `max-line`.
    case tooLong = 413
    /// 416: past the end of a room that stops at its ends, or a `TEXT <n> FROM` offset past the
    /// end of the page.
    case pastEnd = 416
    /// 429: too many wrong `AUTH` tokens from this address or connection; retry later.
    case tooManyAttempts = 429
    /// 500: the server could not do it (the document could not be read, or the room's version
    /// reached its limit). A change that could not be saved is 507.
    case internalError = 500
    /// 503: the server is full, or (with Redis) its state engine is unavailable.
    case full = 503
    /// 507: a change could not be saved (disk full, I/O error); nothing changed.
    case notSaved = 507
}

/// An error reply for one command line: its code, a one-line message for people,
/// and whether the server closes the connection after sending it.
public struct ProtocolError: Error, Equatable, Sendable {
    /// The numeric code sent after `ERR`.
    public var code: ErrorCode
    /// The text for people; one line, never containing LF.
    public var message: String
    /// True for input that looks like HTTP or TLS, and for the 503 refusals sent on connect (server
    /// full, too many connections from the address); the server then closes the connection.
    public var closesConnection: Bool

    /// Creates an error. `closesConnection` defaults to false.
    public init(code: ErrorCode, message: String, closesConnection: Bool = false) {
        self.code = code
        self.message = message
        self.closesConnection = closesConnection
    }

    /// A 400 error with the given message.
    public static func malformed(_ message: String) -> ProtocolError {
        ProtocolError(code: .malformed, message: message)
    }

    /// The 413 error for a line over the limit: `line longer than <max> bytes`.
    public static func lineTooLong(maxLineLength: Int) -> ProtocolError {
        ProtocolError(code: .tooLong, message: "line longer than \(maxLineLength) bytes")
    }

    /// The 503 error sent to a connection past `max-clients`: `server full`.
    public static let serverFull = ProtocolError(code: .full, message: "server full")
}

/// A page turn a client asks for.
public enum Navigation: Equatable, Sendable {
    /// `NEXT`: the page after the current one.
    case next
    /// `PREV`: the page before the current one.
    case previous
    /// `FIRST`: page 1.
    case first
    /// `LAST`: the last page.
    case last
    /// `GOTO <n>`: page n.
    case goto(PageNumber)
}

/// One parsed command line.
public enum Command: Equatable, Sendable {
    /// `NEXT`/`PREV`/`FIRST`/`LAST`/`GOTO`, with the optional `IF <version>` condition.
    case navigate(Navigation, ifVersion: UInt64?)
    /// `LINE <n> [IF <version>]`: the room's top line, on the current page.
    case line(Int, ifVersion: UInt64?)
    /// `MARK <a>[-<b>] [IF <version>]`: mark lines a..b of the current page; `MARK -` (nil) clears it.
    case mark(LineRange?, ifVersion: UInt64?)
    /// `STATUS`.
    case status
    /// `TEXT [<n>]`; nil means the room's current page.
    case text(PageNumber?)
    /// `TEXT <n> FROM <offset>`: page n from byte `offset` of the page on (a piece of a long page).
    case textFrom(PageNumber, offset: Int)
    /// `ROOMS`.
    case rooms
    /// `NOTES [<n>]`: the speaker notes of page n; nil means the room's current page.
    case notes(PageNumber?)
    /// `JOIN <room>`; the room name is valid per `Names.isValid`.
    case join(String)
    /// `NAME <name>`; the name is valid per `Names.isValid`.
    case name(String)
    /// `WHO [<offset>]`: the names from position `offset` (0 when not given) on, in join order.
    case who(offset: Int)
    /// `AUTH <token>`.
    case auth(String)
    /// `PING [<text>]`: the rest of the line, trimmed, or nil when there is none.
    case ping(String?)
    /// `HELP`.
    case help
    /// `QUIT`.
    case quit
    /// `INFO [<section>]`: the server's state and counters; nil means every section.
    case info(InfoSection?)
    /// `VIEW FOLLOW`, `VIEW BROWSE <page>`: what this member's screen shows (presence).
    case view(MemberView)
    /// `HAND UP`, `HAND DOWN [<name>|ALL]`: raise or lower hands (presence).
    case hand(HandCommand)
}

/// Parses one command line (without its LF) into a `Command`.
public enum CommandParser {
    /// The message sent (with code 400, closing the connection) for input that looks like HTTP.
    public static let httpMessage = "this is a pagesync server, not an HTTP server"

    private static let httpMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
        "PRI",  // `PRI * HTTP/2.0`: the HTTP/2 connection preface (RFC 9113, 3.4)
    ]

    /// One line (no LF) -> a command, or a `ProtocolError` with a clear one-line message.
    ///
    /// Verbs and the `IF` keyword are case-insensitive; arguments are split on runs of
    /// spaces and tabs; leading and trailing blanks are ignored. Every failure is a 400
    /// error; HTTP-looking input additionally has `closesConnection` set.
    public static func parse(_ line: some Collection<UInt8>) -> Result<Command, ProtocolError> {
        if let fast = line.withContiguousStorageIfAvailable(NavigationFastPath.parse) ?? nil { return .success(fast) }
        return parseInGeneral(line)
    }

    /// ``parse(_:)`` of bytes in memory: the server's call for every line. Not generic, so
    /// another module calls it directly (``parse(_:)`` called from there goes through the
    /// protocol witnesses of its collection, three calls deep, on every command).
    public static func parse(bytes line: UnsafeBufferPointer<UInt8>) -> Result<Command, ProtocolError> {
        if let fast = NavigationFastPath.parse(line) { return .success(fast) }
        return parseInGeneral(line)
    }

    /// ``parse(_:)`` without ``NavigationFastPath`` (the tests compare the two).
    package static func parseInGeneral(_ line: some Collection<UInt8>) -> Result<Command, ProtocolError> {
        let bytes = Array(line)
        if bytes.contains(0) { return .failure(.malformed("NUL byte in line")) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(.malformed("line is not valid UTF-8"))
        }
        if let control = text.unicodeScalars.first(where: { ControlCharacters.isControl($0) && $0 != "\t" }) {
            return .failure(.malformed("control character \(ControlCharacters.describe(control)) in line"))
        }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let verbWord = words.first else { return .failure(.malformed("empty line")) }
        if looksLikeHTTP(words) {
            return .failure(ProtocolError(code: .malformed, message: httpMessage, closesConnection: true))
        }
        let verb = verbWord.uppercased()
        let args = Array(words.dropFirst())
        switch verb {
        case "NEXT": return navigation(.next, verb: verb, args[...])
        case "PREV": return navigation(.previous, verb: verb, args[...])
        case "FIRST": return navigation(.first, verb: verb, args[...])
        case "LAST": return navigation(.last, verb: verb, args[...])
        case "GOTO":
            guard let first = args.first, !isIF(first) else {
                return .failure(.malformed("GOTO needs a page number: GOTO <n> [IF <version>]"))
            }
            switch parsePage(first) {
            case .failure(let e): return .failure(e)
            case .success(let page): return navigation(.goto(page), verb: verb, args.dropFirst())
            }
        case "LINE": return FocusCommands.line(args[...])
        case "VIEW": return AudienceCommands.view(args[...])
        case "HAND": return AudienceCommands.hand(args[...])
        case "MARK": return FocusCommands.mark(args[...])
        case "STATUS": return noArguments(.status, verb: verb, args)
        case "ROOMS": return noArguments(.rooms, verb: verb, args)
        case "WHO":
            guard let first = args.first else { return .success(.who(offset: 0)) }
            if isIF(first) { return .failure(strayIF()) }
            guard first.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return .failure(.malformed("\"\(first)\" is not an offset; usage: WHO [<offset>]"))
            }
            switch parseNumber(first, as: Int.self, what: "offset") {
            case .failure(let e): return .failure(e)
            case .success(let offset):
                if let extra = extraError(verb: verb, usage: "WHO [<offset>]", args.dropFirst()) { return .failure(extra) }
                return .success(.who(offset: offset))
            }
        case "HELP": return noArguments(.help, verb: verb, args)
        case "QUIT": return noArguments(.quit, verb: verb, args)
        case "TEXT":
            guard let first = args.first else { return .success(.text(nil)) }
            if isIF(first) { return .failure(strayIF()) }
            switch parsePage(first) {
            case .failure(let e): return .failure(e)
            case .success(let page):
                let rest = args.dropFirst()
                if let from = rest.first, from.uppercased() == "FROM" {
                    let usage = "TEXT <n> FROM <offset>"
                    guard let word = rest.dropFirst().first else {
                        return .failure(.malformed("FROM needs a byte offset: \(usage)"))
                    }
                    if let extra = extraError(verb: verb, usage: usage, rest.dropFirst(2)) { return .failure(extra) }
                    return parseNumber(word, as: Int.self, what: "byte offset").map { .textFrom(page, offset: $0) }
                }
                if let extra = extraError(verb: verb, usage: "TEXT [<n>]", rest) { return .failure(extra) }
                return .success(.text(page))
            }
        case "NOTES":
            guard let first = args.first else { return .success(.notes(nil)) }
            if isIF(first) { return .failure(strayIF()) }
            if let extra = extraError(verb: verb, usage: "NOTES [<n>]", args.dropFirst()) { return .failure(extra) }
            return parsePage(first).map(Command.notes)
        case "JOIN":
            return oneName(verb: verb, args, what: "room name", usage: "JOIN <room>").map(Command.join)
        case "NAME":
            return oneName(verb: verb, args, what: "name", usage: "NAME <name>").map(Command.name)
        case "AUTH":
            guard let token = args.first else {
                return .failure(.malformed("AUTH needs a token: AUTH <token>"))
            }
            if let extra = extraError(verb: verb, usage: "AUTH <token>", args.dropFirst()) { return .failure(extra) }
            return .success(.auth(String(token)))
        case "INFO":
            guard let first = args.first else { return .success(.info(nil)) }
            if isIF(first) { return .failure(strayIF()) }
            if let extra = extraError(verb: verb, usage: "INFO [<section>]", args.dropFirst()) { return .failure(extra) }
            if first.lowercased() == "all" || first.lowercased() == "default" { return .success(.info(nil)) }
            guard let section = InfoSection(rawValue: first.lowercased()) else {
                let names = InfoSection.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(.malformed("no INFO section \"\(first)\"; sections: \(names), all"))
            }
            return .success(.info(section))
        case "PING":
            let rest = text.drop(while: isBlank).dropFirst(verbWord.count)
            let trimmed = trimBlanks(rest)
            return .success(.ping(trimmed.isEmpty ? nil : String(trimmed)))
        case "IF":
            return .failure(.malformed("IF must follow NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK"))
        default:
            return .failure(.malformed("unknown command \"\(verbWord)\"; send HELP for the list"))
        }
    }

    // MARK: - Pieces

    private static func isBlank(_ c: Character) -> Bool { c == " " || c == "\t" }

    private static func trimBlanks(_ s: Substring) -> Substring {
        var s = s
        while let f = s.first, isBlank(f) { s = s.dropFirst() }
        while let l = s.last, isBlank(l) { s = s.dropLast() }
        return s
    }

    static func isIF(_ word: Substring) -> Bool { word.uppercased() == "IF" }

    private static func strayIF() -> ProtocolError {
        .malformed("IF only works after NEXT, PREV, FIRST, LAST, GOTO, LINE or MARK")
    }

    private static func looksLikeHTTP(_ words: [Substring]) -> Bool {
        guard let first = words.first else { return false }
        if first.count >= 5, first.prefix(5).lowercased() == "host:" { return true }
        guard words.count >= 3, httpMethods.contains(first.uppercased()), let last = words.last else { return false }
        let utf8 = Array(last.utf8)
        guard utf8.count >= 6 else { return false }
        let prefix = String(decoding: utf8[0..<5], as: UTF8.self).uppercased()
        return prefix == "HTTP/" && (0x30...0x39).contains(utf8[5])
    }

    private static func usage(of nav: Navigation) -> String {
        switch nav {
        case .next: return "NEXT [IF <version>]"
        case .previous: return "PREV [IF <version>]"
        case .first: return "FIRST [IF <version>]"
        case .last: return "LAST [IF <version>]"
        case .goto: return "GOTO <n> [IF <version>]"
        }
    }

    /// Parses the optional `IF <version>` tail of a navigation command.
    private static func navigation(_ nav: Navigation, verb: String, _ args: ArraySlice<Substring>) -> Result<Command, ProtocolError> {
        guard let first = args.first else { return .success(.navigate(nav, ifVersion: nil)) }
        guard isIF(first) else {
            return .failure(.malformed("unexpected argument \"\(first)\"; usage: \(usage(of: nav))"))
        }
        let rest = args.dropFirst()
        guard let versionWord = rest.first else {
            return .failure(.malformed("IF needs a version number: \(usage(of: nav))"))
        }
        if isIF(versionWord) { return .failure(.malformed("IF given twice")) }
        let version: UInt64
        switch parseNumber(versionWord, as: UInt64.self, what: "version number") {
        case .failure(let e): return .failure(e)
        case .success(let v): version = v
        }
        if let extra = rest.dropFirst().first {
            if isIF(extra) { return .failure(.malformed("IF given twice")) }
            return .failure(.malformed("unexpected argument \"\(extra)\"; usage: \(usage(of: nav))"))
        }
        return .success(.navigate(nav, ifVersion: version))
    }

    private static func noArguments(_ command: Command, verb: String, _ args: [Substring]) -> Result<Command, ProtocolError> {
        if let extra = extraError(verb: verb, usage: verb, args[...]) { return .failure(extra) }
        return .success(command)
    }

    /// An error for arguments left over after a command's own, or nil when there are none.
    private static func extraError(verb: String, usage: String, _ rest: ArraySlice<Substring>) -> ProtocolError? {
        guard let extra = rest.first else { return nil }
        if isIF(extra) { return strayIF() }
        return .malformed("unexpected argument \"\(extra)\"; usage: \(usage)")
    }

    private static func oneName(verb: String, _ args: [Substring], what: String, usage: String) -> Result<String, ProtocolError> {
        guard let name = args.first else {
            return .failure(.malformed("\(verb) needs a \(what): \(usage)"))
        }
        if let extra = extraError(verb: verb, usage: usage, args.dropFirst()) { return .failure(extra) }
        guard Names.isValid(String(name)) else {
            return .failure(.malformed("invalid \(what) \"\(name)\": use 1-32 characters from A-Z a-z 0-9 . _ -"))
        }
        return .success(String(name))
    }

    static func parsePage(_ word: Substring) -> Result<PageNumber, ProtocolError> {
        if word.first == "-", word.count > 1, word.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) {
            return .failure(.malformed("page numbers start at 1"))
        }
        switch parseNumber(word, as: Int.self, what: "page number") {
        case .failure(let e): return .failure(e)
        case .success(let n):
            guard let page = PageNumber(n) else { return .failure(.malformed("page numbers start at 1")) }
            return .success(page)
        }
    }

    /// All-ASCII-digit decimal, overflow-checked.
    static func parseNumber<T: FixedWidthInteger>(_ word: Substring, as: T.Type, what: String) -> Result<T, ProtocolError> {
        var value: T = 0
        for byte in word.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else {
                return .failure(.malformed("\"\(word)\" is not a \(what)"))
            }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(T(byte - 0x30))
            if o1 || o2 { return .failure(.malformed("number too large")) }
            value = a
        }
        return .success(value)
    }
}
