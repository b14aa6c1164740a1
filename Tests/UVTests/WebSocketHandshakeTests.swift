import Testing
import UV

@Suite struct WebSocketHandshakeTests {
    /// RFC 6455, 1.3's example key.
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    static func head(method: String = "GET", version: HTTPVersion = .http11, hasBody: Bool = false,
                     without: Set<String> = [], replacing: [String: String] = [:], adding: [HTTPHeader] = []) -> HTTPRequestHead {
        var fields = [
            HTTPHeader("Host", "127.0.0.1:8080"), HTTPHeader("Upgrade", "websocket"), HTTPHeader("Connection", "keep-alive, Upgrade"),
            HTTPHeader("Sec-WebSocket-Version", "13"), HTTPHeader("Sec-WebSocket-Key", key),
        ].filter { !without.contains($0.name) }
        for index in fields.indices { if let value = replacing[fields[index].name] { fields[index].value = value } }
        return HTTPRequestHead(method: method, target: "/ws?room=guide", version: version, headers: fields + adding,
                               hasBody: hasBody, upgrade: true)
    }

    static func refusal(_ decision: WebSocketHandshake.Decision) -> HTTPResponse? {
        if case .refuse(let response) = decision { return response }
        return nil
    }

    @Test func theAcceptValueOfRFC6455sExample() {
        #expect(WebSocketHandshake.acceptValue(forKey: Self.key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func aValidHandshakeSwitchesProtocols() throws {
        let decision = WebSocketHandshake.decide(Self.head(adding: [HTTPHeader("Origin", "http://127.0.0.1:8080")]))
        guard case .accept(let response) = decision else { Issue.record("refused: \(decision)"); return }
        #expect(response.status == 101)
        #expect(response.headers.contains(HTTPHeader("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")))
        #expect(response.headers.contains(HTTPHeader("Upgrade", "websocket")))
        #expect(response.headers.contains(HTTPHeader("Connection", "Upgrade")))
        #expect(response.body.isEmpty)
    }

    @Test func headerValuesAreCaseInsensitiveTokens() {
        let decision = WebSocketHandshake.decide(Self.head(replacing: ["Upgrade": "WebSocket", "Connection": "UPGRADE"]))
        #expect(Self.refusal(decision) == nil)
    }

    @Test func eachRefusalHasItsStatus() {
        let cases: [(HTTPRequestHead, Int)] = [
            (Self.head(method: "POST"), 405),
            (Self.head(version: .http10), 400),
            (Self.head(hasBody: true), 400),
            (Self.head(without: ["Upgrade"]), 426),
            (Self.head(replacing: ["Upgrade": "h2c"]), 426),
            (Self.head(without: ["Connection"]), 400),
            (Self.head(replacing: ["Connection": "keep-alive"]), 400),
            (Self.head(without: ["Sec-WebSocket-Version"]), 426),
            (Self.head(replacing: ["Sec-WebSocket-Version": "8"]), 426),
            (Self.head(without: ["Sec-WebSocket-Key"]), 400),
            (Self.head(replacing: ["Sec-WebSocket-Key": "c2hvcnQ="]), 400),
            (Self.head(adding: [HTTPHeader("Origin", "http://evil.example")]), 403),
            (Self.head(adding: [HTTPHeader("Origin", "null")]), 403),
        ]
        for (head, status) in cases {
            let response = Self.refusal(WebSocketHandshake.decide(head))
            #expect(response?.status == status, "\(head.method) \(head.headers)")
            #expect(response.map { !$0.body.isEmpty && $0.body.last == 0x0A } == true, "a one-line reason")
        }
        #expect(Self.refusal(WebSocketHandshake.decide(Self.head(method: "PUT")))?.headers.contains(HTTPHeader("Allow", "GET")) == true)
        #expect(Self.refusal(WebSocketHandshake.decide(Self.head(replacing: ["Sec-WebSocket-Version": "8"])))?
            .headers.contains(HTTPHeader("Sec-WebSocket-Version", "13")) == true)
    }

    @Test func keysMustBeSixteenBytesOfBase64() {
        #expect(WebSocketHandshake.isValidKey(Self.key))
        #expect(WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAA=="))
        #expect(!WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAB=="), "17th byte's bits set: not 16 bytes")
        #expect(!WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAAA="), "17 bytes")
        #expect(!WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAA*A=="))
        #expect(!WebSocketHandshake.isValidKey(""))
    }

    @Test func originsAreThisHostOrListed() {
        #expect(WebSocketHandshake.originAllowed("http://127.0.0.1:8080", host: "127.0.0.1:8080", allowed: []))
        #expect(WebSocketHandshake.originAllowed("HTTPS://Slides.Example:8443", host: "slides.example:8443", allowed: []))
        #expect(!WebSocketHandshake.originAllowed("http://127.0.0.1:9999", host: "127.0.0.1:8080", allowed: []), "another port")
        #expect(!WebSocketHandshake.originAllowed("http://127.0.0.1:8080.evil", host: "127.0.0.1:8080", allowed: []))
        #expect(!WebSocketHandshake.originAllowed("file://", host: "127.0.0.1:8080", allowed: []))
        #expect(!WebSocketHandshake.originAllowed("http://a.example", host: nil, allowed: []))
        #expect(WebSocketHandshake.originAllowed("https://a.example", host: "b.example", allowed: ["https://A.example/"]))
        #expect(!WebSocketHandshake.originAllowed("https://a.example.evil", host: "b.example", allowed: ["https://a.example"]))
        // Listed in the configuration: accepted through decide too.
        let listed = WebSocketHandshake.decide(Self.head(adding: [HTTPHeader("Origin", "https://a.example")]), allowedOrigins: ["https://a.example"])
        #expect(Self.refusal(listed) == nil)
    }
}
