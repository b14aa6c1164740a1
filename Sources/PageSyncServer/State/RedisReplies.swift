import PageSyncCore
import UV

/// What Redis's replies to the engine's commands and scripts mean, without I/O.
package enum RedisReplies {
    /// What a navigation script's reply means.
    package enum Navigation: Equatable {
        /// The script decided; ``NavigationDecision/missing`` also means: read every room again.
        case decided(NavigationDecision)
        /// No answer (the connection is gone) or an error saying Redis cannot answer for now
        /// (``NavigationDecision/isTransient(redisError:)``): `ERR 503`.
        case unavailable
        /// Redis refused to store the change (out of memory, a read-only replica), or the key
        /// holds something that is not a room: `ERR 507` with this reason.
        case refused(String)
        /// A reply the script cannot give: logged, and `ERR 503`.
        case unexpected
    }

    /// The navigation script's `reply` for `navigation` of `room` (key `key`).
    package static func navigation(_ reply: RedisReply?, room: String, key: String,
                                   navigation: PageSyncCore.Navigation?, ifVersion: UInt64?, servedVersion: UInt64 = 0) -> Navigation {
        guard let reply else { return .unavailable }
        if case .error(let e) = reply {
            return NavigationDecision.isTransient(redisError: e) ? .unavailable : .refused(NavigationDecision.refusal(redisError: e))
        }
        if isCorrupt(reply) {
            return .refused("redis: \(key) does not hold a pagesync room (written by something else?); delete it to start the room again")
        }
        guard case .array(let items) = reply,
              let decision = NavigationDecision.decode(items.map { $0.text ?? "" }, room: room, navigation: navigation, ifVersion: ifVersion,
                                                     servedVersion: servedVersion)
        else { return .unexpected }
        return .decided(decision)
    }

    /// What a sync script's reply means.
    package enum Sync: Equatable {
        /// Applied: the outcome (`created`, `restarted`, `changed`, `kept`) and the state it left.
        case applied(outcome: String, state: SavedRoom)
        /// No answer: the connection is gone.
        case noAnswer
        /// The key holds something that is not a room.
        case corrupt
        /// Anything else (an error reply included): logged.
        case unexpected
    }

    /// The sync script's `reply` for `room`.
    package static func sync(_ reply: RedisReply?, room: String) -> Sync {
        guard let reply else { return .noAnswer }
        guard case .array(let items) = reply, items.count == 8, let outcome = items[0].text,
              let saved = RedisRoomFields.saved(room: room, page: items[1].text ?? "", version: items[2].text ?? "",
                                                by: items[3].text ?? "-", doc: items[4].text ?? "-", epoch: items[5].text ?? "",
                                                line: items[6].text ?? "1", mark: items[7].text ?? "-")
        else { return isCorrupt(reply) ? .corrupt : .unexpected }
        return .applied(outcome: outcome, state: saved)
    }

    /// An `HMGET <room> page version by doc epoch line mark` reply: nil if it is not a room,
    /// `.some(nil)` if the room is missing.
    package static func roomHash(_ reply: RedisReply, room: String) -> SavedRoom?? {
        guard case .array(let f) = reply, f.count == 7 else { return nil }
        if f[0] == .null && f[1] == .null { return .some(nil) }
        guard let page = f[0].text, let version = f[1].text else { return nil }
        let saved = RedisRoomFields.saved(room: room, page: page, version: version, by: f[2].text ?? "-",
                                          doc: f[3].text ?? "-", epoch: f[4].text ?? "0", line: f[5].text ?? "1", mark: f[6].text ?? "-")
        return saved.map { .some($0) }
    }

    /// The members script's reply for `rooms` rooms: each room's lines, or nil.
    package static func members(_ reply: RedisReply?, rooms: Int) -> [[String]]? {
        guard case .array(let items) = reply, items.count == rooms else { return nil }
        return items.map { ($0.text ?? "").split(separator: "\n").map(String.init) }
    }

    /// What the subscriber connection received.
    package enum Publication: Equatable {
        /// The subscription is confirmed: the subscriber is up.
        case subscribed
        /// A room's new state, published by a script.
        case state(SavedRoom)
        /// A message on a room's channel that is not a state: logged and ignored.
        case malformed(channel: String, line: String)
        /// Anything else: ignored.
        case other
    }

    /// A reply on the subscriber connection.
    package static func publication(_ reply: RedisReply) -> Publication {
        guard case .array(let parts) = reply, let kind = parts.first?.text else { return .other }
        if kind == "psubscribe" { return .subscribed }
        guard kind == "pmessage", parts.count == 4, let line = parts[3].text else { return .other }
        guard let saved = RoomStateLine.decode(line) else { return .malformed(channel: parts[2].text ?? "?", line: line) }
        return .state(saved)
    }

    /// The scripts' answer for a key that does not hold a room.
    package static func isCorrupt(_ reply: RedisReply) -> Bool {
        guard case .array(let items) = reply, items.count == 1 else { return false }
        return items[0].text == "corrupt"
    }

    /// A key prefix as a PSUBSCRIBE pattern that matches only itself.
    package static func globEscaped(_ text: String) -> String {
        var out = ""
        for c in text {
            if "*?[]\\".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
