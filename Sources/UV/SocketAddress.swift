import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address, as libuv takes and returns it.
enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    /// Parses an IP literal. `"localhost"` means `127.0.0.1`; `"[::1]"` brackets are accepted.
    /// Returns nil for anything else (host names are not resolved here).
    init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var literal = host
        if literal.lowercased() == "localhost" { literal = "127.0.0.1" }
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if literal.contains(":") {
            var address = sockaddr_in6()
            guard uv_ip6_addr(literal, Int32(port), &address) == 0 else { return nil }
            self = .v6(address)
        } else {
            // uv_ip4_addr (inet_pton) accepts only dotted quads, so names fall through to nil.
            var address = sockaddr_in()
            guard uv_ip4_addr(literal, Int32(port), &address) == 0 else { return nil }
            self = .v4(address)
        }
    }

    /// Reads an address from a `sockaddr_storage` filled by the kernel; nil for other families.
    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            self = withUnsafeBytes(of: &storage) { .v4($0.load(as: sockaddr_in.self)) }
        case AF_INET6:
            self = withUnsafeBytes(of: &storage) { .v6($0.load(as: sockaddr_in6.self)) }
        default:
            return nil
        }
    }

    /// Reads an address from a `sockaddr` pointer (e.g. from `getaddrinfo`).
    init?(pointer: UnsafePointer<sockaddr>) {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            self = UnsafeRawPointer(pointer).withMemoryRebound(to: sockaddr_in.self, capacity: 1) { .v4($0.pointee) }
        case AF_INET6:
            self = UnsafeRawPointer(pointer).withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { .v6($0.pointee) }
        default:
            return nil
        }
    }

    /// The numeric host, without brackets ("127.0.0.1", "::1").
    var host: String {
        var buffer = [CChar](repeating: 0, count: 64)
        switch self {
        case .v4(var address):
            _ = uv_ip4_name(&address, &buffer, buffer.count)
        case .v6(var address):
            _ = uv_ip6_name(&address, &buffer, buffer.count)
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The port, in host byte order.
    var port: Int {
        switch self {
        case .v4(let address): Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// True for 127.0.0.0/8, ::1 and IPv4-mapped 127.x (::ffff:127.0.0.1).
    var isLoopback: Bool {
        switch self {
        case .v4(let address):
            return UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
        case .v6(let address):
            let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
            return mapped && bytes[12] == 127
        }
    }

    /// "127.0.0.1:7777" or "[::1]:7777".
    var description: String {
        switch self {
        case .v4: "\(host):\(port)"
        case .v6: "[\(host)]:\(port)"
        }
    }

    /// Calls `body` with a `sockaddr` pointer to this address.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch self {
        case .v4(var address):
            withUnsafePointer(to: &address) { body(UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self)) }
        case .v6(var address):
            withUnsafePointer(to: &address) { body(UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self)) }
        }
    }

    /// The local (`sockname`) or remote (`peername`) address of a TCP handle.
    static func of(_ tcp: UnsafeMutablePointer<uv_tcp_t>, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                peer ? uv_tcp_getpeername(tcp, address, &length) : uv_tcp_getsockname(tcp, address, &length)
            }
        }
        guard result == 0 else { return nil }
        return SocketAddress(storage: storage)
    }
}
