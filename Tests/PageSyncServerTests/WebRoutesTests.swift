import PageSyncServer
import Testing
import UV

@Suite struct WebRoutesTests {
    static func route(_ target: String, method: String = "GET") -> WebRoute {
        WebRoutes.route(HTTPRequestHead(method: method, target: target, headers: [HTTPHeader("Host", "h")])) { $0 == "talk" }
    }

    static func response(_ route: WebRoute) -> HTTPResponse? {
        if case .respond(let response) = route { return response }
        return nil
    }

    @Test func thePageAndItsAssetsCarryTheSecurityHeaders() throws {
        for (path, type) in [("/", "text/html"), ("/talk", "text/html"), ("/app.js", "text/javascript"), ("/app.css", "text/css")] {
            let response = try #require(Self.response(Self.route(path)), "\(path)")
            #expect(response.status == 200, "\(path)")
            #expect(response.headers.first { $0.name == "Content-Type" }?.value.hasPrefix(type) == true, "\(path)")
            let policy = response.headers.first { $0.name == "Content-Security-Policy" }?.value ?? ""
            #expect(policy.hasPrefix("default-src 'self'") && !policy.contains("unsafe"), "\(path): \(policy)")
            #expect(response.headers.contains(HTTPHeader("X-Content-Type-Options", "nosniff")))
            #expect(!response.headers.contains { $0.name.lowercased() == "set-cookie" })
        }
        #expect(Self.response(Self.route("/", method: "HEAD"))?.status == 200)
    }

    @Test func thePageHasNoInlineScriptAndLoadsItsOwn() throws {
        let page = try #require(Self.response(Self.route("/")))
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("<script src=\"/app.js\" defer></script>"))
        #expect(html.components(separatedBy: "<script").count == 2, "one script element, with src")
        #expect(html.firstMatch(of: /\son[a-z]+=/) == nil, "no inline event handlers")
        #expect(html.contains("aria-live"))
        let script = String(decoding: try #require(Self.response(Self.route("/app.js"))).body, as: UTF8.self)
        #expect(script.contains("DOMParser") && !script.contains("innerHTML") && !script.contains("eval("), "pages are parsed inert, never run")
    }

    @Test func webSocketRoutesNameTheirRoom() {
        #expect(Self.route("/ws?room=talk") == .webSocket(room: "talk"))
        #expect(Self.route("/ws?x=1&room=other") == .webSocket(room: "other"), "an unknown room is the socket's to refuse")
        #expect(Self.route("/ws") == .webSocket(room: nil))
        #expect(Self.route("/ws", method: "POST") == .webSocket(room: nil), "the handshake answers 405 itself")
        #expect(Self.route("/render/talk/3") == .render(room: "talk", page: 3))
        #expect(Self.route("/render/other/1") == .render(room: "other", page: 1), "an unknown room is the shell's 404")
        #expect(Self.route("/render/../1") == .render(room: "..", page: 1), "a room name, never a path: no room is named ..")
    }

    @Test func everythingElseIsRefused() {
        let cases: [(String, String, Int)] = [
            ("/nope", "GET", 404), ("/../etc/passwd", "GET", 404), ("/talk/../../etc", "GET", 404),
            ("/%2e%2e/secret", "GET", 404), ("/a/b", "GET", 404), ("/render/talk/0", "GET", 404), ("/render/talk/x", "GET", 404),
            ("/render/talk/1/2", "GET", 404), ("/render/talk/1", "POST", 405), ("/talk", "POST", 405), ("/", "DELETE", 405),
        ]
        for (path, method, status) in cases {
            let response = Self.response(Self.route(path, method: method))
            #expect(response?.status == status, "\(method) \(path)")
            #expect(response?.body.last == 0x0A, "a one-line reason")
        }
        #expect(Self.response(Self.route("/talk", method: "POST"))?.headers.contains(HTTPHeader("Allow", "GET, HEAD")) == true)
    }

    @Test func queryValues() {
        #expect(WebRoutes.query("/ws?room=a&b=c", "b") == "c")
        #expect(WebRoutes.query("/ws?room", "room") == "")
        #expect(WebRoutes.query("/ws", "room") == nil)
    }
}
