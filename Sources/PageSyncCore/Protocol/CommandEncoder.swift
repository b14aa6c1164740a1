/// Turns a ``Command`` into the line that asks the server for it: the inverse of ``CommandParser``,
/// used by every client (the pager, pagesync-bench, the tests).
///
/// For every command ``CommandParser/parse(_:)`` returns, parsing the encoded line gives that
/// command back. Verbs are written in upper case as PROTOCOL.md's command table writes them,
/// words separated by one space: `NEXT IF 7`, `GOTO 3`, `TEXT 2 FROM 4096`, `WHO 100`,
/// `PING hello`. `WHO` at offset 0 is written `WHO` (the parser reads both alike). Before a
/// token or a text that begins with a combining mark the separator is a tab: a space would take
/// the mark into its own character, which is then no separator for the parser.
///
/// Arguments are written as given, so an argument the parser would refuse (an invalid name, a
/// token with a space, a negative offset) is refused by the server too, with `ERR 400`. The
/// result is always one line: a control character in an argument other than tab (LF and CR
/// among them) is written as a space, so no argument can smuggle in a second command.
public enum CommandEncoder {
    /// The command's line, without its LF.
    public static func line(_ command: Command) -> String {
        switch command {
        case .navigate(let navigation, let ifVersion):
            let verb = switch navigation {
            case .next: "NEXT"
            case .previous: "PREV"
            case .first: "FIRST"
            case .last: "LAST"
            case .goto(let page): "GOTO \(page.number)"
            }
            return ifVersion.map { "\(verb) IF \($0)" } ?? verb
        case .line(let n, let ifVersion): return "LINE \(n)" + (ifVersion.map { " IF \($0)" } ?? "")
        case .mark(let range, let ifVersion): return "MARK \(range?.text ?? "-")" + (ifVersion.map { " IF \($0)" } ?? "")
        case .status: return "STATUS"
        case .text(nil): return "TEXT"
        case .text(let page?): return "TEXT \(page.number)"
        case .textFrom(let page, let offset): return "TEXT \(page.number) FROM \(offset)"
        case .rooms: return "ROOMS"
        case .notes(nil): return "NOTES"
        case .notes(let page?): return "NOTES \(page.number)"
        case .join(let room): return argument("JOIN", room)
        case .name(let name): return argument("NAME", name)
        case .who(let offset): return offset == 0 ? "WHO" : "WHO \(offset)"
        case .auth(let token): return argument("AUTH", token)
        case .ping(nil): return "PING"
        case .ping(let text?): return argument("PING", text)
        case .help: return "HELP"
        case .quit: return "QUIT"
        case .info(nil): return "INFO"
        case .info(let section?): return "INFO \(section.rawValue)"
        case .view(.follow): return "VIEW FOLLOW"
        case .view(.browse(let page)): return "VIEW BROWSE \(page.number)"
        case .hand(.up): return "HAND UP"
        case .hand(.down): return "HAND DOWN"
        case .hand(.downFor(let name)): return argument("HAND DOWN", name)
        case .hand(.downAll): return "HAND DOWN ALL"
        }
    }

    /// The command's line and its LF, as UTF-8: the bytes to write to the server.
    public static func bytes(_ command: Command) -> [UInt8] {
        Array(line(command).utf8) + [0x0A]
    }

    /// `verb`, a separator, then `text` with every control character but tab written as a space.
    /// The separator is a space unless the text would join it into one character (it begins
    /// with a combining mark); then a tab, after which a character always begins (Unicode's
    /// grapheme rules break after a control character).
    private static func argument(_ verb: String, _ text: String) -> String {
        let text = ControlCharacters.replacingControls(text, keepingTabs: true)
        return verb + ((" " + text).first == " " ? " " : "\t") + text
    }
}
