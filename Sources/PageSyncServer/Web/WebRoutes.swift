import PageSyncCore
import UV

/// What the web listener does with a request.
package enum WebRoute: Equatable {
    /// `GET /ws?room=<name>`: a WebSocket handshake for `room` (nil: the default room). The
    /// handshake itself is ``WebSocketHandshake``'s to accept or refuse.
    case webSocket(room: String?)
    /// `GET /render/<room>/<n>`: page `n` of `room` as an HTML fragment (markdown rendered
    /// safely, other text escaped in a `<pre>`); the shell reads the page.
    case render(room: String, page: Int)
    /// A fixed answer: the follower page, its script and style, `404`, `405`.
    case respond(HTTPResponse)
}

/// The paths of `--web-listen` (README.md, "Followers in a browser"): a pure function from a
/// request head to a decision.
///
/// | Request                      | Answer                                                      |
/// |------------------------------|-------------------------------------------------------------|
/// | `GET /`, `GET /<room>`       | the follower page (`404` for a room that does not exist)    |
/// | `GET /app.js`, `/app.css`    | its script and style                                        |
/// | `GET /ws?room=<name>`        | the WebSocket (``WebRoute/webSocket(room:)``)               |
/// | `GET /render/<room>/<n>`     | page n as HTML (``WebRoute/render(room:page:)``)            |
/// | any other path               | `404` (no path maps to a file: `..` reaches nothing)        |
/// | a method other than GET/HEAD | `405`, `Allow: GET, HEAD`                                   |
package enum WebRoutes {
    /// The WebSocket's path.
    package static let webSocketPath = "/ws"
    /// Where pages are rendered: `/render/<room>/<n>`.
    package static let renderPrefix = "/render/"

    /// The headers of every page and asset: only this origin's script, style and sockets
    /// (`Content-Security-Policy`), no framing, no referrer, no sniffing, no caching of a page
    /// that changes with the binary.
    package static let securityHeaders = [
        HTTPHeader("Content-Security-Policy",
                   "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        HTTPHeader("X-Content-Type-Options", "nosniff"),
        HTTPHeader("Referrer-Policy", "no-referrer"),
        HTTPHeader("Cache-Control", "no-cache"),
    ]

    /// The route for `head`; `roomExists` says whether a room of that name is served.
    package static func route(_ head: HTTPRequestHead, roomExists: (String) -> Bool) -> WebRoute {
        let path = head.path
        if path == webSocketPath {
            // The handshake answers a wrong method itself (405 with Allow: GET).
            return .webSocket(room: query(head.target, "room"))
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            return .respond(.text(405, "\(head.method.prefix(20)) is not allowed here: use GET",
                                  headers: [HTTPHeader("Allow", "GET, HEAD")] + securityHeaders))
        }
        switch path {
        case "/", "/index.html":
            return .respond(asset(WebPage.html, type: "text/html; charset=utf-8"))
        case "/app.js":
            return .respond(asset(WebScript.source, type: "text/javascript; charset=utf-8"))
        case "/app.css":
            return .respond(asset(WebPage.css, type: "text/css; charset=utf-8"))
        case _ where path.hasPrefix(renderPrefix):
            let parts = path.dropFirst(renderPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, Names.isValid(String(parts[0])), let page = Int(parts[1]), page >= 1 else {
                return .respond(.text(404, "no such page: \(path.prefix(100)) (pages are \(renderPrefix)<room>/<n>)", headers: securityHeaders))
            }
            return .render(room: String(parts[0]), page: page)
        default:
            let name = String(path.dropFirst())
            guard Names.isValid(name) else {
                return .respond(.text(404, "no such page: \(path.prefix(100)) (rooms are /<room>, names of A-Z a-z 0-9 . _ -)",
                                      headers: securityHeaders))
            }
            guard roomExists(name) else {
                return .respond(.text(404, "no room named \(name)", headers: securityHeaders))
            }
            return .respond(asset(WebPage.html, type: "text/html; charset=utf-8"))
        }
    }

    /// The value of `name` in `target`'s query (`/ws?room=talk`), as sent (room names need no
    /// decoding: a name that does not match a room gets `ERR 404` on the socket).
    package static func query(_ target: String, _ name: String) -> String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first == Substring(name) { return parts.count > 1 ? String(parts[1]) : "" }
        }
        return nil
    }

    private static func asset(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", type)] + securityHeaders, body: Array(text.utf8))
    }
}
