import Testing
import UV

@Suite struct HTTPHeadParserTests {
    private func parsedHead(_ text: String) -> (HTTPRequestHead, Int)? {
        let parser = HTTPHeadParser()
        guard case .head(let head, let consumed) = parser.parse(Array(text.utf8)) else { return nil }
        return (head, consumed)
    }

    @Test func aRequestLineAndItsFields() throws {
        let text = "GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9470\r\nAccept:  text/plain \r\nX-Two: a\r\n\r\n"
        let (head, consumed) = try #require(parsedHead(text))
        #expect(consumed == text.utf8.count)
        #expect(head.method == "GET")
        #expect(head.target == "/metrics?x=1")
        #expect(head.path == "/metrics")
        #expect(head.version == .http11)
        #expect(head.headers == [HTTPHeader("Host", "127.0.0.1:9470"), HTTPHeader("Accept", "text/plain"), HTTPHeader("X-Two", "a")])
        #expect(head.header("accept") == "text/plain")
        #expect(head.header("HOST") == "127.0.0.1:9470")
        #expect(head.keepAlive && !head.hasBody && !head.upgrade)
        #expect(head.violation == nil)
    }

    @Test func aHeadInPiecesOfOneByte() throws {
        let text = Array("GET /healthz HTTP/1.1\r\nHost: h\r\nUser-Agent: Prometheus/2.42.0\r\n\r\n".utf8)
        let parser = HTTPHeadParser()
        for i in 0..<(text.count - 1) {
            #expect(parser.parse([text[i]]) == .needMore, "byte \(i)")
        }
        guard case .head(let head, let consumed) = parser.parse([text.last!]) else {
            Issue.record("no head after the last byte")
            return
        }
        #expect(consumed == 1)
        #expect(head.target == "/healthz")
        #expect(head.header("User-Agent") == "Prometheus/2.42.0")
    }

    @Test func pipelinedRequestsStopAtTheEndOfTheFirstHead() throws {
        let first = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
        let second = "HEAD /b HTTP/1.1\r\nHost: h\r\n\r\n"
        let bytes = Array((first + second).utf8)
        let parser = HTTPHeadParser()
        guard case .head(let a, let consumed) = parser.parse(bytes) else {
            Issue.record("no first head")
            return
        }
        #expect(a.target == "/a")
        #expect(consumed == first.utf8.count)
        parser.reset()
        guard case .head(let b, let rest) = parser.parse(Array(bytes[consumed...])) else {
            Issue.record("no second head")
            return
        }
        #expect(b.method == "HEAD" && b.target == "/b")
        #expect(rest == second.utf8.count)
    }

    @Test func http10ClosesUnlessItAsksToKeepAlive() throws {
        let (plain, _) = try #require(parsedHead("GET /metrics HTTP/1.0\r\n\r\n"))
        #expect(plain.version == .http10 && !plain.keepAlive)
        #expect(plain.violation == nil, "HTTP/1.0 needs no Host")
        let (kept, _) = try #require(parsedHead("GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
        #expect(kept.keepAlive)
        let (closing, _) = try #require(parsedHead("GET /metrics HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
        #expect(!closing.keepAlive)
    }

    @Test func aBodyIsNoticedNotRead() throws {
        let text = "GET /metrics HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n"
        let (sized, consumed) = try #require(parsedHead(text + "hello"))
        #expect(sized.hasBody)
        #expect(consumed == text.utf8.count, "the body is the caller's")
        let (chunked, _) = try #require(parsedHead("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
        #expect(chunked.hasBody)
        let (empty, _) = try #require(parsedHead("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"))
        #expect(!empty.hasBody)
    }

    @Test func anUpgradeRequest() throws {
        let text = "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        let (head, consumed) = try #require(parsedHead(text + "\u{81}\u{80}"))
        #expect(head.upgrade)
        #expect(consumed == text.utf8.count)
    }

    @Test func binaryBytesAreNoRequest() {
        let parser = HTTPHeadParser()
        let outcome = parser.parse([0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03])
        guard case .invalid = outcome else {
            Issue.record("a TLS ClientHello parsed as \(outcome)")
            return
        }
        #expect(parser.parse(Array("GET / HTTP/1.1\r\n\r\n".utf8)) == outcome, "a spent parser stays spent")
        parser.reset()
        guard case .head = parser.parse(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8)) else {
            Issue.record("reset did not make it usable again")
            return
        }
    }

    @Test func otherMalformedHeads() {
        for text in ["GET /\0 HTTP/1.1\r\n\r\n", "GET / HTTP/9.x\r\n\r\n", "GET / HTTP/1.1\r\nBad(Name: x\r\n\r\n",
                     "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "\u{7F}ELLO\r\n"] {
            guard case .invalid = HTTPHeadParser().parse(Array(text.utf8)) else {
                Issue.record("accepted: \(text.debugDescription)")
                continue
            }
        }
    }

    @Test func hostIsRequiredOnceInHTTP11() throws {
        let (noHost, _) = try #require(parsedHead("GET / HTTP/1.1\r\n\r\n"))
        #expect(noHost.violation == "HTTP/1.1 request without a Host header")
        let (twoHosts, _) = try #require(parsedHead("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"))
        #expect(twoHosts.violation == "more than one Host header")
    }
}

@Suite struct HTTPResponseTests {
    @Test func theHeadHasLengthAndConnectionFields() {
        let response = HTTPResponse.text(404, "no such page: /x")
        let head = String(decoding: response.encodedHead(closing: false), as: UTF8.self)
        #expect(head == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 17\r\n\r\n")
        #expect(response.body == Array("no such page: /x\n".utf8))
        let closing = String(decoding: HTTPResponse(status: 503).encodedHead(closing: true), as: UTF8.self)
        #expect(closing == "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test func noFieldCanBreakTheHead() {
        let response = HTTPResponse(status: 200, headers: [HTTPHeader("X-Why", "a\r\nSet-Cookie: b")])
        let head = String(decoding: response.encodedHead(closing: false), as: UTF8.self)
        #expect(head == "HTTP/1.1 200 OK\r\nX-Why: a  Set-Cookie: b\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func aHEADAnswerGivesTheLengthOfTheBodyItLeavesOut() {
        let head = String(decoding: HTTPResponse(status: 200, body: [1, 2, 3]).encodedHead(closing: false, bodyLength: 3), as: UTF8.self)
        #expect(head.contains("Content-Length: 3\r\n"))
    }
}
