import PageSyncServer
import Testing
import UV

/// DNS rebinding against a web listener on loopback: only this machine's names for it pass.
@Suite struct WebHostCheckTests {
    func head(host: String) -> HTTPRequestHead {
        HTTPRequestHead(method: "GET", target: "/ws", version: .http11, headers: [HTTPHeader("Host", host)])
    }

    @Test func aLoopbackListenerAnswersOnlyLoopbackNames() {
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "127.0.0.2", "app.localhost:8080"] {
            #expect(WebHostCheck.refusal(head(host: host), loopback: true, allowedOrigins: []) == nil, "\(host)")
        }
        let rebound = WebHostCheck.refusal(head(host: "evil.example:8080"), loopback: true, allowedOrigins: [])
        #expect(rebound?.status == 421)
        #expect(rebound.map { String(decoding: $0.body, as: UTF8.self) }?.contains("not evil.example") == true)
        #expect(WebHostCheck.refusal(head(host: "10.0.0.5:8080"), loopback: true, allowedOrigins: [])?.status == 421)
    }

    @Test func aListedOriginsHostPassesAndAnotherListenerTakesAnyHost() {
        #expect(WebHostCheck.refusal(head(host: "slides.example:8080"), loopback: true, allowedOrigins: ["https://slides.example:8080"]) == nil)
        #expect(WebHostCheck.refusal(head(host: "evil.example"), loopback: false, allowedOrigins: []) == nil, "a class on a network names it as it likes")
    }

    @Test func namesWithoutTheirPorts() {
        #expect(WebHostCheck.hostName("[::1]:8080") == "::1")
        #expect(WebHostCheck.hostName("Example.org:80") == "example.org")
        #expect(WebHostCheck.hostName("localhost") == "localhost")
        #expect(WebHostCheck.isLoopback("127.0.0.1") && WebHostCheck.isLoopback("::1") && !WebHostCheck.isLoopback("0.0.0.0"))
    }
}
