/// The arguments of `LINE <n> [IF <version>]` and `MARK <a>[-<b>] [IF <version>]` (`MARK -`
/// clears the mark), each bad one refused with a one-line `ERR 400` that shows the usage.
/// Line numbers start at 1; whether a line exists is the room's to say (`ERR 416`).
enum FocusCommands {
    static let lineUsage = "LINE <n> [IF <version>]"
    static let markUsage = "MARK <a>[-<b>] [IF <version>], or MARK - to clear"

    static func line(_ args: ArraySlice<Substring>) -> Result<Command, ProtocolError> {
        guard let word = args.first, !CommandParser.isIF(word) else {
            return .failure(.malformed("LINE needs a line number: \(lineUsage)"))
        }
        switch lineNumber(word, usage: lineUsage) {
        case .failure(let e): return .failure(e)
        case .success(let n): return ifClause(args.dropFirst(), usage: lineUsage).map { .line(n, ifVersion: $0) }
        }
    }

    static func mark(_ args: ArraySlice<Substring>) -> Result<Command, ProtocolError> {
        guard let word = args.first, !CommandParser.isIF(word) else {
            return .failure(.malformed("MARK needs lines: \(markUsage)"))
        }
        let range: LineRange?
        if word == "-" {
            range = nil
        } else {
            let ends = word.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard ends.allSatisfy({ !$0.isEmpty }) else {
                return .failure(.malformed("\"\(word)\" is not a range of lines; usage: \(markUsage)"))
            }
            var numbers: [Int] = []
            for end in ends {
                switch lineNumber(end, usage: markUsage) {
                case .failure(let e): return .failure(e)
                case .success(let n): numbers.append(n)
                }
            }
            guard let marked = LineRange(first: numbers[0], last: numbers.last!) else {
                return .failure(.malformed("\(word) goes backwards: a range is <first>-<last>, \(numbers.last!)-\(numbers[0])"))
            }
            range = marked
        }
        return ifClause(args.dropFirst(), usage: markUsage).map { .mark(range, ifVersion: $0) }
    }

    /// A line number: digits, at least 1.
    private static func lineNumber(_ word: Substring, usage: String) -> Result<Int, ProtocolError> {
        switch CommandParser.parseNumber(word, as: Int.self, what: "line number") {
        case .failure(let e): return .failure(ProtocolError.malformed("\(e.message); usage: \(usage)"))
        case .success(0): return .failure(.malformed("lines start at 1; usage: \(usage)"))
        case .success(let n): return .success(n)
        }
    }

    /// Nothing, or `IF <version>` and nothing after it.
    private static func ifClause(_ rest: ArraySlice<Substring>, usage: String) -> Result<UInt64?, ProtocolError> {
        guard let first = rest.first else { return .success(nil) }
        guard CommandParser.isIF(first) else {
            return .failure(.malformed("unexpected argument \"\(first)\"; usage: \(usage)"))
        }
        guard let word = rest.dropFirst().first else {
            return .failure(.malformed("IF needs a version number: \(usage)"))
        }
        if CommandParser.isIF(word) { return .failure(.malformed("IF given twice")) }
        if let extra = rest.dropFirst(2).first {
            return .failure(.malformed(CommandParser.isIF(extra) ? "IF given twice" : "unexpected argument \"\(extra)\"; usage: \(usage)"))
        }
        return CommandParser.parseNumber(word, as: UInt64.self, what: "version number").map { Optional($0) }
    }
}
