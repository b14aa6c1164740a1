/// The host part of a peer, as used to group connections by source address.
public enum PeerAddress {
    /// `"1.2.3.4"` from `"1.2.3.4:5555"`, `"::1"` from `"[::1]:5555"`, and an IPv4-mapped
    /// IPv6 address (`"[::ffff:1.2.3.4]:5"`) as its IPv4 form. Anything else is returned
    /// unchanged (for example `"?"` for an unknown peer).
    public static func host(ofPeer description: String) -> String {
        var host = Substring(description)
        if host.first == "[", let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            host = host[..<colon]
        }
        let mapped = "::ffff:"
        if host.lowercased().hasPrefix(mapped), host.dropFirst(mapped.count).contains(".") {
            host = host.dropFirst(mapped.count)
        }
        return String(host)
    }
}
