import PageSyncCore
import UV

/// DNS rebinding: a page of another site whose name was made to point at 127.0.0.1 reaches a
/// web listener on loopback with its own name as `Host` and as `Origin`, which the WebSocket's
/// Origin check (the request's own host) would let through. A listener bound to loopback is
/// for this machine's browsers, which name it `localhost`, `127.x.x.x` or `[::1]`: any other
/// `Host` is refused (`421`), unless it is the host of an origin listed in `web-origins`. A
/// listener on another address (a class on a network) takes any `Host`. Pure.
package enum WebHostCheck {
    /// Whether `address` (a listener's numeric host) is a loopback address.
    package static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127.")
    }

    /// The answer refusing `head` on a listener that is (`loopback`) or is not bound to
    /// loopback, or nil to go on.
    package static func refusal(_ head: HTTPRequestHead, loopback: Bool, allowedOrigins: [String]) -> HTTPResponse? {
        guard loopback, let host = head.header("Host") else { return nil }
        let name = hostName(host)
        if name == "localhost" || name.hasSuffix(".localhost") || isLoopback(name) { return nil }
        if allowedOrigins.contains(where: { hostName(String($0.split(separator: "/").last ?? "")) == name }) { return nil }
        return .text(421, "this listener is on loopback and answers localhost, 127.0.0.1 or [::1], not \(name.prefix(100)) (web-origins may list it)",
                     headers: WebRoutes.securityHeaders)
    }

    /// `host`'s name without its port, lowercased (`[::1]:8080` → `::1`, `Example:80` → `example`).
    package static func hostName(_ host: String) -> String {
        var text = host.trimmingBlanks.lowercased()
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return String(text[text.index(after: text.startIndex)..<close])
        }
        if let colon = text.lastIndex(of: ":") { text = String(text[..<colon]) }
        return text
    }
}
