import Testing
import PageSyncCore

private func decode(_ s: String) -> PersistedRoom? { PersistedRoomCodec.decode(Array(s.utf8)) }

@Suite struct PersistenceTests {
    @Test func encodeFormat() {
        let r = PersistedRoom(page: PageNumber(3)!, version: 17, by: "ann", doc: "5f1c3a2b")
        #expect(String(decoding: PersistedRoomCodec.encode(r), as: UTF8.self)
            == "pagesync-state 1\npage=3\nversion=17\nby=ann\ndoc=5f1c3a2b\n")
        let bare = PersistedRoom(page: .first, version: 0, by: nil, doc: nil)
        #expect(String(decoding: PersistedRoomCodec.encode(bare), as: UTF8.self) == "pagesync-state 1\npage=1\nversion=0\n")
    }

    @Test(arguments: [
        PersistedRoom(page: PageNumber(3)!, version: 17, by: "ann", doc: "5f1c3a2b"),
        PersistedRoom(page: .first, version: 0, by: nil, doc: nil),
        PersistedRoom(page: PageNumber(Int.max)!, version: UInt64.max, by: "guest-12", doc: nil),
        PersistedRoom(page: PageNumber(2)!, version: 1, by: nil, doc: "abc=def"),
    ])
    func roundTrip(_ r: PersistedRoom) {
        #expect(PersistedRoomCodec.decode(PersistedRoomCodec.encode(r)) == r)
    }

    @Test func newlinesInValuesCannotBreakTheFormat() {
        let r = PersistedRoom(page: .first, version: 1, by: "a\nversion=9", doc: "x\r\ny")
        let decoded = PersistedRoomCodec.decode(PersistedRoomCodec.encode(r))
        #expect(decoded?.version == 1)
        #expect(decoded?.by == "a-version=9")
        #expect(decoded?.doc == "x-y")
    }

    @Test func toleratesMissingOrEmptyOptionals() {
        #expect(decode("pagesync-state 1\npage=2\nversion=5\n") == PersistedRoom(page: PageNumber(2)!, version: 5, by: nil, doc: nil))
        #expect(decode("pagesync-state 1\nversion=5\npage=2\ndoc=d\n") == PersistedRoom(page: PageNumber(2)!, version: 5, by: nil, doc: "d"))
        #expect(decode("pagesync-state 1\npage=2\nversion=5\nby=\ndoc=\n") == PersistedRoom(page: PageNumber(2)!, version: 5, by: nil, doc: nil))
    }

    @Test func ignoresUnknownKeys() {
        #expect(decode("pagesync-state 1\npage=2\nversion=5\nfuture=thing\n")?.version == 5)
    }

    @Test(arguments: [
        "",
        "garbage",
        "\n",
        "pagesync-state 1\n",
        "pagesync-state 2\npage=3\nversion=17\n",
        "pagesync-state\npage=3\nversion=17\n",
        "pagesync-state 1 \npage=3\nversion=17\n",
        "PAGESYNC-STATE 1\npage=3\nversion=17\n",
        "pagesync-state 1\npage=3\nversion=17",          // truncated: no final LF
        "pagesync-state 1\npage=3\nvers",
        "pagesync-state 1\npage=3\n",                    // missing version
        "pagesync-state 1\nversion=3\n",                 // missing page
        "pagesync-state 1\npage=0\nversion=1\n",
        "pagesync-state 1\npage=-1\nversion=1\n",
        "pagesync-state 1\npage=x\nversion=1\n",
        "pagesync-state 1\npage=\nversion=1\n",
        "pagesync-state 1\npage=99999999999999999999\nversion=1\n",
        "pagesync-state 1\npage=1\nversion=18446744073709551616\n",
        "pagesync-state 1\npage=1\nversion=+1\n",
        "pagesync-state 1\npage=1\nversion=1\nversion=2\n",   // duplicate
        "pagesync-state 1\npage=1\nversion=1\njunk\n",        // line without =
        "pagesync-state 1\npage=1\nversion=1\n=x\n",
        "pagesync-state 1\npage=1\nversion=1\n\n",            // empty line
        "pagesync-state 1\r\npage=1\r\nversion=1\r\n",
    ])
    func rejects(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test func rejectsInvalidUTF8() {
        var bytes = Array("pagesync-state 1\npage=1\nversion=1\nby=".utf8)
        bytes += [0xFF, 0x0A]
        #expect(PersistedRoomCodec.decode(bytes) == nil)
    }

    @Test func rejectsEveryTruncation() {
        let full = PersistedRoomCodec.encode(PersistedRoom(page: PageNumber(12)!, version: 345, by: "ann", doc: "d0c"))
        // Cutting the file anywhere either fails or (at a line boundary after version)
        // yields the same page and version; never a different number.
        for cut in 0..<full.count {
            if let partial = PersistedRoomCodec.decode(full[0..<cut]) {
                #expect(partial.page.number == 12)
                #expect(partial.version == 345)
            }
        }
        #expect(PersistedRoomCodec.decode(full[0..<20]) == nil)
    }
}

@Suite struct ListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:7777", "127.0.0.1", UInt16(7777)),
        ("[::1]:7777", "::1", 7777),
        ("[::]:80", "::", 80),
        ("[fe80::1:2]:1", "fe80::1:2", 1),
        ("localhost:7777", "localhost", 7777),
        (":7777", "127.0.0.1", 7777),
        ("0.0.0.0:0", "0.0.0.0", 0),
        (":0", "127.0.0.1", 0),
        ("example.com:65535", "example.com", 65535),
        ("my-host:07777", "my-host", 7777),
    ])
    func parses(_ text: String, _ host: String, _ port: UInt16) {
        #expect(ListenAddress(parsing: text) == ListenAddress(host: host, port: port))
    }

    @Test(arguments: [
        "", "7777", ":", "localhost", "localhost:", "127.0.0.1", "[::1]", "[::1]:", "[::1]7777", "[]:7777",
        "::1:7777", "[::1:7777", "127.0.0.1:65536", "127.0.0.1:99999999", "127.0.0.1:-1", "127.0.0.1:+1",
        "127.0.0.1:7777 ", " 127.0.0.1:7777", "127.0.0.1:77 77", "host name:1", "a/b:1", "-host:1",
        "[zz::1]:7777", "[localhost]:7777", "127.0.0.1:0x10", "garbage", "[::1]:7777x",
    ])
    func rejects(_ text: String) {
        #expect(ListenAddress(parsing: text) == nil)
    }

    @Test func descriptionRoundTrips() {
        #expect(ListenAddress(host: "127.0.0.1", port: 7777).description == "127.0.0.1:7777")
        #expect(ListenAddress(host: "::1", port: 7777).description == "[::1]:7777")
        for text in ["127.0.0.1:7777", "[::1]:7777", "localhost:1", "[fe80::1]:0"] {
            #expect(ListenAddress(parsing: text)?.description == text)
        }
    }
}
