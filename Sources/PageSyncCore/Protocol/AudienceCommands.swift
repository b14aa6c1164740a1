/// The arguments of `VIEW FOLLOW`, `VIEW BROWSE <page>` and `HAND UP|DOWN [<name>|ALL]`,
/// each bad one refused with a one-line `ERR 400` that shows the usage. Whether a page exists is
/// the room's to say (`ERR 416`).
enum AudienceCommands {
    static let viewUsage = "VIEW FOLLOW, or VIEW BROWSE <page>"
    static let handUsage = "HAND UP, HAND DOWN, or with control HAND DOWN <name> or HAND DOWN ALL"

    static func view(_ args: ArraySlice<Substring>) -> Result<Command, ProtocolError> {
        guard let word = args.first else { return .failure(.malformed("VIEW needs FOLLOW or BROWSE <page>: \(viewUsage)")) }
        switch word.uppercased() {
        case "FOLLOW":
            if let extra = args.dropFirst().first { return .failure(.malformed("unexpected argument \"\(extra)\"; usage: \(viewUsage)")) }
            return .success(.view(.follow))
        case "BROWSE":
            guard let page = args.dropFirst().first else { return .failure(.malformed("BROWSE needs a page: \(viewUsage)")) }
            if let extra = args.dropFirst(2).first { return .failure(.malformed("unexpected argument \"\(extra)\"; usage: \(viewUsage)")) }
            return CommandParser.parsePage(page).map { .view(.browse($0)) }
        default:
            return .failure(.malformed("\"\(word)\" is not FOLLOW or BROWSE; usage: \(viewUsage)"))
        }
    }

    static func hand(_ args: ArraySlice<Substring>) -> Result<Command, ProtocolError> {
        guard let word = args.first else { return .failure(.malformed("HAND needs UP or DOWN: \(handUsage)")) }
        let rest = args.dropFirst()
        switch word.uppercased() {
        case "UP":
            if let extra = rest.first { return .failure(.malformed("unexpected argument \"\(extra)\"; usage: \(handUsage)")) }
            return .success(.hand(.up))
        case "DOWN":
            guard let who = rest.first else { return .success(.hand(.down)) }
            if let extra = rest.dropFirst().first { return .failure(.malformed("unexpected argument \"\(extra)\"; usage: \(handUsage)")) }
            if who.uppercased() == "ALL" { return .success(.hand(.downAll)) }
            guard Names.isValid(String(who)) else { return .failure(.malformed("\"\(who)\" is not a name; usage: \(handUsage)")) }
            return .success(.hand(.downFor(String(who))))
        default:
            return .failure(.malformed("\"\(word)\" is not UP or DOWN; usage: \(handUsage)"))
        }
    }
}
