/// What the authority over room state (the Redis navigation script) decided about one
/// navigation, with the room's state as the script saw or left it.
public enum NavigationDecision: Equatable, Sendable {
    /// The page changed: `OK` with this new state (already published to every daemon).
    case moved(SavedRoom)
    /// The target was the current page: `OK`, nothing changed.
    case unchanged(SavedRoom)
    /// Refused (409, 416, 404); nothing changed.
    case refused(NavigationError, SavedRoom)
    /// The room has no state in Redis, or one behind what this daemon served saved in the same
    /// epoch (Redis lost changes): it will be made again, and nothing changed.
    case missing
    /// The engine could not be asked (Redis down): `ERR 503`, nothing changed.
    case unavailable
    /// Redis answered with an error instead of making the change (out of memory under
    /// `maxmemory` with `noeviction`, a read-only replica, ...): `ERR 507 state not saved:
    /// <reason>`, nothing changed. See ``refusal(redisError:)``.
    case notSaved(String)

    /// The reason an error reply of Redis gives for ``notSaved(_:)``: its first line, without
    /// the script location Redis appends to errors raised inside a script, at most 200
    /// bytes. `OOM command not allowed when used memory > 'maxmemory'. script: 63cc…, on
    /// @user_script:1.` gives `redis: OOM command not allowed when used memory > 'maxmemory'`.
    public static func refusal(redisError: String) -> String {
        var text = redisError.prefix { !$0.isNewline }
        if let script = text.firstRange(of: " script: ") { text = text[..<script.lowerBound] }
        while let last = text.last, last == "." || last == " " { text = text.dropLast() }
        if text.isEmpty { text = "error" }
        var bytes = 0
        let scalars = text.unicodeScalars.prefix { scalar in
            bytes += UTF8.width(scalar)
            return bytes <= 200
        }
        return "redis: \(String(String.UnicodeScalarView(scalars)))"
    }

    /// True for an error reply that says Redis cannot answer for now, not that it refused to
    /// store the change: `LOADING` (loading its data after a restart), `BUSY` (a script runs
    /// too long), `MASTERDOWN`, `TRYAGAIN`, `CLUSTERDOWN`. Such a change gets `ERR 503 state
    /// engine unavailable`, as when Redis is unreachable.
    public static func isTransient(redisError: String) -> Bool {
        let code = redisError.prefix { $0 != " " && !$0.isNewline }
        return ["LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN"].contains(code)
    }

    /// Decodes the navigation script's reply: `[outcome, page, version, by, doc, epoch, line, mark]` where
    /// outcome is `moved`, `same`, `conflict`, `otherpage` (LINE or MARK for a page the room left: 409 against `ifVersion`, else `servedVersion`), `end-first`, `end-last`, `nopage` or `limit` (the
    /// version is 2^64-1), or the single field `missing` or `behind`. `navigation` and `ifVersion` are the
    /// request (for the error's details). nil for a reply that is none of these.
    public static func decode(_ fields: [String], room: String, navigation: Navigation?, ifVersion: UInt64?,
                              servedVersion: UInt64 = 0) -> NavigationDecision? {
        if fields == ["missing"] || fields == ["behind"] { return .missing }
        guard fields.count == 8,
              let state = RedisRoomFields.saved(room: room, page: fields[1], version: fields[2], by: fields[3], doc: fields[4], epoch: fields[5],
                                                line: fields[6], mark: fields[7])
        else { return nil }
        switch fields[0] {
        case "moved": return .moved(state)
        case "same": return .unchanged(state)
        case "conflict":
            guard let expected = ifVersion else { return nil }
            return .refused(.conflict(expected: expected), state)
        case "otherpage":
            // LINE or MARK checked against a page the room has left: as stale as a failed IF.
            return .refused(.conflict(expected: ifVersion ?? servedVersion), state)
        case "end-first": return .refused(.pastEnd(.first), state)
        case "end-last": return .refused(.pastEnd(.last), state)
        case "limit": return .refused(.versionExhausted, state)
        case "nopage":
            guard case .goto(let page)? = navigation else { return nil }
            return .refused(.noSuchPage(page), state)
        default: return nil
        }
    }
}
