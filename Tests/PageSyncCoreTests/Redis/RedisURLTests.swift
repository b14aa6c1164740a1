import Testing
import PageSyncCore

@Suite struct RedisURLTests {
    private func parse(_ s: String) -> RedisURL? { try? RedisURL.parse(s).get() }
    private func error(_ s: String) -> String? {
        if case .failure(let e) = RedisURL.parse(s) { return e.message }
        return nil
    }

    @Test func hostPortAndDefaults() {
        #expect(parse("redis://127.0.0.1:6380") == RedisURL(location: .tcp(host: "127.0.0.1", port: 6380)))
        #expect(parse("redis://cache.internal") == RedisURL(location: .tcp(host: "cache.internal", port: 6379)))
        #expect(parse("redis://localhost:7000/3") == RedisURL(location: .tcp(host: "localhost", port: 7000), database: 3))
        #expect(parse("redis://localhost:7000/") == RedisURL(location: .tcp(host: "localhost", port: 7000)))
        #expect(parse("redis://[::1]:6390/2") == RedisURL(location: .tcp(host: "::1", port: 6390), database: 2))
        #expect(parse("redis://[::1]") == RedisURL(location: .tcp(host: "::1", port: 6379)))
    }

    @Test func credentials() {
        #expect(parse("redis://:s3cret@h:1") == RedisURL(location: .tcp(host: "h", port: 1), password: "s3cret"))
        #expect(parse("redis://ann:pw@h:1/5") == RedisURL(location: .tcp(host: "h", port: 1), user: "ann", password: "pw", database: 5))
        // Percent-encoded, and an '@' inside the password.
        #expect(parse("redis://ann:p%40ss%3Aw@h:1")?.password == "p@ss:w")
        #expect(parse("redis://ann:p@ss@h:1")?.password == "p@ss")
        #expect(error("redis://ann@h:1")?.contains("user without a password") == true)
        #expect(error("redis://ann:%zz@h:1")?.contains("%-escape") == true)
    }

    @Test func unixSockets() {
        #expect(parse("unix:///run/redis/redis.sock") == RedisURL(location: .unix(path: "/run/redis/redis.sock")))
        #expect(parse("unix:///tmp/r.sock?db=4") == RedisURL(location: .unix(path: "/tmp/r.sock"), database: 4))
        #expect(error("unix://relative.sock") != nil)
        #expect(error("unix:///tmp/r.sock?x=1")?.contains("unknown query") == true)
    }

    @Test func badURLsSayWhyInOneLine() {
        for bad in ["", "http://h:1", "redis://", "redis://h:0", "redis://h:65536", "redis://h:x", "redis://h:1/x",
                    "redis://[::1", "redis://[::1]x", "rediss://h:1"] {
            let message = error(bad)
            #expect(message != nil, "\(bad)")
            #expect(message?.contains("\n") == false)
            #expect(message?.hasPrefix("redis: ") == true)
        }
        #expect(error("rediss://h:1")?.contains("TLS") == true)
    }

    @Test func passwordsNeverShow() {
        #expect(parse("redis://ann:pw@h:1/5")?.description == "redis://ann:***@h:1/5")
        #expect(parse("redis://:pw@[::1]:1")?.description == "redis://:***@[::1]:1")
        #expect(parse("unix:///tmp/r.sock?db=4")?.description == "unix:///tmp/r.sock?db=4")
        #expect(error("redis://ann:topsecret@h:x")?.contains("topsecret") == false)
    }
}

@Suite struct RoomStateLineTests {
    private let state = SavedRoom(room: "talk", page: PageNumber(3)!, version: 17, by: "ann", doc: "5f1c3a2b9d0e", epoch: Epoch(0xabc))

    @Test func roundTrips() {
        #expect(RoomStateLine.encode(state) == "talk 3 17 0000000000000abc 5f1c3a2b9d0e ann 1 -")
        #expect(RoomStateLine.decode(RoomStateLine.encode(state)) == state)
        var focused = state
        focused.line = 212
        focused.mark = LineRange(first: 214, last: 214)
        #expect(RoomStateLine.encode(focused) == "talk 3 17 0000000000000abc 5f1c3a2b9d0e ann 212 214-214")
        #expect(RoomStateLine.decode(RoomStateLine.encode(focused)) == focused)
        // An older daemon's line (no line, no mark): line 1, no mark.
        #expect(RoomStateLine.decode("talk 3 17 0000000000000abc 5f1c3a2b9d0e ann") == state)
        var nobody = state
        nobody.by = nil
        #expect(RoomStateLine.encode(nobody).hasSuffix(" -"))
        #expect(RoomStateLine.decode(RoomStateLine.encode(nobody)) == nobody)
    }

    @Test func rejectsAnythingElse() {
        for bad in ["", "talk 3 17 abc doc", "talk 3 17 abc doc ann extra", "talk 0 17 abc doc ann", "talk x 17 abc doc ann",
                    "talk 3 -1 abc doc ann", "talk 3 17 xyz doc ann", "bad/name 3 17 abc doc ann", "talk  3 17 abc doc ann",
                    "talk 3 99999999999999999999999 abc doc ann", "talk 3 17 abc doc ann 0 -", "talk 3 17 abc doc ann 4 9-3",
                    "talk 3 17 abc doc ann 4 3-", "talk 3 17 abc doc ann 4", "talk 3 17 abc doc ann x -"] {
            #expect(RoomStateLine.decode(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct NavigationDecisionTests {
    private let fields = ["7", "12", "bob", "d0c", "00000000000000ff", "40", "41-44"]
    private func decode(_ outcome: String, _ nav: Navigation = .next, ifVersion: UInt64? = nil) -> NavigationDecision? {
        NavigationDecision.decode([outcome] + fields, room: "r", navigation: nav, ifVersion: ifVersion)
    }
    private var saved: SavedRoom {
        SavedRoom(room: "r", page: PageNumber(7)!, version: 12, by: "bob", doc: "d0c", epoch: Epoch(255), line: 40, mark: LineRange(first: 41, last: 44))
    }

    @Test func eachOutcome() {
        #expect(decode("moved") == .moved(saved))
        #expect(decode("same") == .unchanged(saved))
        #expect(decode("conflict", ifVersion: 11) == .refused(.conflict(expected: 11), saved))
        #expect(decode("end-first", .previous) == .refused(.pastEnd(.first), saved))
        #expect(decode("end-last") == .refused(.pastEnd(.last), saved))
        #expect(decode("nopage", .goto(PageNumber(99)!)) == .refused(.noSuchPage(PageNumber(99)!), saved))
        #expect(decode("limit") == .refused(.versionExhausted, saved))
        // LINE or MARK checked against a page the room has left: stale, as a failed IF.
        #expect(NavigationDecision.decode(["otherpage"] + fields, room: "r", navigation: nil, ifVersion: 10, servedVersion: 9)
            == .refused(.conflict(expected: 10), saved))
        #expect(NavigationDecision.decode(["otherpage"] + fields, room: "r", navigation: nil, ifVersion: nil, servedVersion: 9)
            == .refused(.conflict(expected: 9), saved))
        #expect(NavigationDecision.decode(["moved"] + fields.dropLast(2), room: "r", navigation: .next, ifVersion: nil) == nil,
                "the script always answers the line and the mark")
        #expect(NavigationDecision.decode(["missing"], room: "r", navigation: .next, ifVersion: nil) == .missing)
        // Behind what the daemon served: made again like a missing room, nothing changed.
        #expect(NavigationDecision.decode(["behind"], room: "r", navigation: .next, ifVersion: nil) == .missing)
    }

    @Test func aRedisErrorIsOneShortLineNamingRedis() {
        #expect(NavigationDecision.refusal(redisError: "OOM command not allowed when used memory > 'maxmemory'. script: 63cc75dc0ca9dd3798014ef1081fc6eb39211409, on @user_script:1.")
            == "redis: OOM command not allowed when used memory > 'maxmemory'")
        #expect(NavigationDecision.refusal(redisError: "READONLY You can't write against a read only replica.")
            == "redis: READONLY You can't write against a read only replica")
        #expect(NavigationDecision.refusal(redisError: "MISCONF one\r\ntwo") == "redis: MISCONF one")
        let long = NavigationDecision.refusal(redisError: "ERR " + String(repeating: "é", count: 300))
        #expect(long.utf8.count == "redis: ".utf8.count + 200, "at most 200 bytes, cut between characters: \(long.utf8.count)")
        #expect(long.hasSuffix("é"))
    }

    @Test func redisErrorsThatSayWaitAreOutagesNotRefusals() {
        for transient in ["LOADING Redis is loading the dataset in memory", "BUSY Redis is busy running a script.",
                          "MASTERDOWN Link with MASTER is down", "TRYAGAIN Multiple keys request during rehashing", "CLUSTERDOWN The cluster is down"] {
            #expect(NavigationDecision.isTransient(redisError: transient), "\(transient)")
        }
        for refusal in ["OOM command not allowed when used memory > 'maxmemory'.", "READONLY You can't write against a read only replica.",
                        "MISCONF Errors writing to the AOF file", "ERR Error running script", "BUSYKEY Target key name already exists.", ""] {
            #expect(!NavigationDecision.isTransient(redisError: refusal), "\(refusal)")
        }
        #expect(NavigationDecision.refusal(redisError: "") == "redis: error")
        #expect(NavigationDecision.refusal(redisError: String(repeating: "x", count: 5000)).utf8.count == 207)
    }

    @Test func inconsistentRepliesAreNil() {
        #expect(decode("conflict") == nil)  // a conflict without IF
        #expect(decode("nopage", .next) == nil)  // nopage for something other than GOTO
        #expect(decode("exploded") == nil)
        #expect(NavigationDecision.decode(["moved", "7"], room: "r", navigation: .next, ifVersion: nil) == nil)
        #expect(NavigationDecision.decode([], room: "r", navigation: .next, ifVersion: nil) == nil)
        #expect(NavigationDecision.decode(["moved", "0", "1", "-", "d", "1"], room: "r", navigation: .next, ifVersion: nil) == nil)
    }
}
