import Testing
import PageSyncCore
import PageSyncServer
import UV

private func strings(_ fields: String...) -> RedisReply { .array(fields.map { .string(Array($0.utf8)) }) }

extension RedisReply {
    /// The items of an array reply.
    fileprivate var items: [RedisReply] {
        if case .array(let items) = self { return items }
        return []
    }
}

/// What the Redis engine makes of each reply, without a Redis.
@Suite struct RedisRepliesTests {
    private let key = "ps:room:a"

    private func navigation(_ reply: RedisReply?, _ navigation: Navigation = .next, ifVersion: UInt64? = nil) -> RedisReplies.Navigation {
        RedisReplies.navigation(reply, room: "a", key: key, navigation: navigation, ifVersion: ifVersion)
    }

    @Test func aNavigationScriptsStateIsItsDecision() {
        let moved = navigation(strings("moved", "3", "7", "ann", "d1", "00000000000000ff", "1", "-"))
        guard case .decided(.moved(let state)) = moved else {
            Issue.record("\(moved)")
            return
        }
        #expect(state.page.number == 3 && state.version == 7 && state.by == "ann" && state.doc == "d1" && state.epoch == Epoch(255))
        #expect(navigation(strings("conflict", "3", "7", "ann", "d1", "ff", "1", "-"), ifVersion: 6)
            == .decided(.refused(.conflict(expected: 6), state)))
        #expect(navigation(strings("missing")) == .decided(.missing), "the engine reads every room again")
        #expect(navigation(strings("behind")) == .decided(.missing))
    }

    @Test func noAnswerOrRedisBusyIsUnavailableNotARefusal() {
        #expect(navigation(nil) == .unavailable, "the connection is gone: ERR 503")
        #expect(navigation(.error("BUSY Redis is busy running a script.")) == .unavailable)
        #expect(navigation(.error("LOADING Redis is loading the dataset in memory")) == .unavailable)
    }

    @Test func aRefusedWriteOrAKeyThatIsNoRoomIsNotSaved() {
        #expect(navigation(.error("OOM command not allowed when used memory > 'maxmemory'. script: 63cc, on @user_script:1."))
            == .refused("redis: OOM command not allowed when used memory > 'maxmemory'"))
        #expect(navigation(.error("READONLY You can't write against a read only replica."))
            == .refused("redis: READONLY You can't write against a read only replica"))
        #expect(navigation(strings("corrupt"))
            == .refused("redis: ps:room:a does not hold a pagesync room (written by something else?); delete it to start the room again"))
    }

    @Test func aReplyTheScriptCannotGiveIsUnexpected() {
        #expect(navigation(.integer(1)) == .unexpected)
        #expect(navigation(strings("moved", "0", "7", "ann", "d1", "ff", "1", "-")) == .unexpected, "page 0")
        #expect(navigation(strings("conflict", "3", "7", "ann", "d1", "ff", "1", "-")) == .unexpected, "a conflict without IF")
        #expect(navigation(strings("nopage", "3", "7", "ann", "d1", "ff", "1", "-")) == .unexpected, "nopage without GOTO")
    }

    @Test func aSyncScriptsReply() {
        guard case .applied(let outcome, let state) = RedisReplies.sync(strings("created", "2", "0", "-", "d1", "ab", "1", "-"), room: "a") else {
            Issue.record("not applied")
            return
        }
        #expect(outcome == "created" && state.page.number == 2 && state.version == 0 && state.by == nil)
        #expect(RedisReplies.sync(nil, room: "a") == .noAnswer)
        #expect(RedisReplies.sync(strings("corrupt"), room: "a") == .corrupt)
        #expect(RedisReplies.sync(.error("OOM command not allowed"), room: "a") == .unexpected, "logged by the engine")
        #expect(RedisReplies.sync(strings("kept", "x", "0", "-", "d1", "ab", "1", "-"), room: "a") == .unexpected)
    }

    @Test func aRoomHash() {
        #expect(RedisReplies.roomHash(.array(Array(repeating: .null, count: 7)), room: "a") == .some(nil), "missing")
        let saved = RedisReplies.roomHash(.array(strings("4", "9", "bob", "d2", "10").items + [.null, .null]), room: "a")
        #expect(saved == .some(SavedRoom(room: "a", page: PageNumber(4)!, version: 9, by: "bob", doc: "d2", epoch: Epoch(16))),
                "a room an older daemon wrote: line 1, no mark")
        let focused = RedisReplies.roomHash(strings("4", "9", "bob", "d2", "10", "30", "31-35"), room: "a")
        #expect(focused == .some(SavedRoom(room: "a", page: PageNumber(4)!, version: 9, by: "bob", doc: "d2", epoch: Epoch(16),
                                           line: 30, mark: LineRange(first: 31, last: 35))))
        #expect(RedisReplies.roomHash(strings("4", "9"), room: "a") == nil, "not the seven fields")
        #expect(RedisReplies.roomHash(strings("four", "9", "bob", "d2", "10", "1", "-"), room: "a") == nil, "not a room")
        #expect(RedisReplies.roomHash(strings("4", "9", "bob", "d2", "10", "0", "-"), room: "a") == nil, "line 0")
    }

    @Test func thePublishedStatesAndTheSubscription() {
        #expect(RedisReplies.publication(strings("psubscribe", "ps:room:*")) == .subscribed)
        let message = strings("pmessage", "ps:room:*", "ps:room:a", "a 2 5 ff d1 ann")
        #expect(RedisReplies.publication(message)
            == .state(SavedRoom(room: "a", page: PageNumber(2)!, version: 5, by: "ann", doc: "d1", epoch: Epoch(255))))
        #expect(RedisReplies.publication(strings("pmessage", "ps:room:*", "ps:room:a", "garbage"))
            == .malformed(channel: "ps:room:a", line: "garbage"))
        #expect(RedisReplies.publication(.status("OK")) == .other)
    }

    @Test func membersAndKeyPatterns() {
        #expect(RedisReplies.members(strings("ann control=yes\nbob control=no", ""), rooms: 2)
            == [["ann control=yes", "bob control=no"], []])
        #expect(RedisReplies.members(strings("ann control=yes"), rooms: 2) == nil, "one list per room asked")
        #expect(RedisReplies.members(nil, rooms: 1) == nil)
        #expect(RedisReplies.globEscaped("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\")
    }
}
