import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 response as read off the wire.
struct HTTPTestResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// What one connection to an HTTP server got: its responses, in order, and whether the server
/// closed the connection (end of stream or reset) before the client gave up.
struct HTTPExchange: Sendable {
    var responses: [HTTPTestResponse]
    var closed: Bool
    /// Bytes after the last whole response.
    var leftover: Int
}

/// A plain HTTP/1.1 client over a blocking socket, for the metrics listener's tests: sends bytes
/// exactly as given (bad input included), reads responses by their `Content-Length`. Runs on a
/// dispatch queue, not on the tests' cooperative threads.
enum HTTPTestClient {
    /// `GET path` with `Connection: close`; the one response.
    static func get(port: UInt16, _ path: String) async throws -> HTTPTestResponse {
        let exchange = try await exchange(port: port, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        guard let response = exchange.responses.first else { throw HarnessError("GET \(path): no response") }
        return response
    }

    /// Connects to 127.0.0.1:`port`, sends `request` (in `pieces` of at most that many bytes,
    /// `pause` apart), and reads until the server closes, `expecting` responses arrived (then
    /// the connection is closed by the client), or `timeout` passes.
    static func exchange(port: UInt16, _ request: [UInt8], pieces: Int = .max, pause: Duration = .zero,
                         expecting: Int = .max, timeout: Duration = .seconds(20)) async throws -> HTTPExchange {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try blockingExchange(port: port, request, pieces: pieces, pause: pause, expecting: expecting, timeout: timeout)
                })
            }
        }
    }

    /// A connected blocking socket with a receive timeout.
    static func connect(port: UInt16, timeout: Duration = .seconds(20)) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw HarnessError("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        var tv = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private static func blockingExchange(port: UInt16, _ request: [UInt8], pieces: Int, pause: Duration,
                                         expecting: Int, timeout: Duration) throws -> HTTPExchange {
        let fd = try connect(port: port, timeout: timeout)
        defer { Glibc.close(fd) }
        var at = 0
        var sendFailed = false
        while at < request.count && !sendFailed {
            let end = min(request.count, at + pieces)
            let n = request[at..<end].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { sendFailed = true; break }
            at += n
            if pause > .zero && at < request.count { Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds)) }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var closed = false
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if parse(received).responses.count >= expecting { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                received += buffer[0..<n]
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                closed = true  // end of stream, or a reset
                break
            }
        }
        var exchange = parse(received)
        exchange.closed = closed
        return exchange
    }

    /// The whole responses in `bytes`.
    static func parse(_ bytes: [UInt8]) -> HTTPExchange {
        var responses: [HTTPTestResponse] = []
        var at = 0
        let separator: [UInt8] = [13, 10, 13, 10]
        while let headEnd = firstIndex(of: separator, in: bytes, from: at) {
            let head = String(decoding: bytes[at..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusLine = head[0].split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { break }
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = headEnd + 4
            guard bytes.count >= bodyStart + length else { break }
            responses.append(HTTPTestResponse(status: status, headers: headers, body: Array(bytes[bodyStart..<(bodyStart + length)])))
            at = bodyStart + length
        }
        return HTTPExchange(responses: responses, closed: false, leftover: bytes.count - at)
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var i = start
        while i + pattern.count <= bytes.count {
            if bytes[i] == pattern[0] && Array(bytes[i..<(i + pattern.count)]) == pattern { return i }
            i += 1
        }
        return nil
    }
}

/// The metrics listener's port, from the daemon's `metrics on http://127.0.0.1:<port>/metrics` line.
func metricsPort(_ daemon: Daemon) async throws -> UInt16 {
    let pattern = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/
    for _ in 0..<250 {
        if let match = daemon.stderr.firstMatch(of: pattern), let port = UInt16(match.1) { return port }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw HarnessError("pagesyncd did not log `metrics on http://...`; stderr:\n\(daemon.stderr)")
}

/// The samples of a Prometheus text body: `name{labels}` -> value.
func prometheusSamples(_ body: String) -> [String: String] {
    var out: [String: String] = [:]
    for line in body.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        out[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return out
}

/// A TCP socket bound to a free port of 127.0.0.1 (listening when `listening`), and its port.
/// The caller closes it; closed at once, the port is free for a server to take.
func boundLoopbackSocket(listening: Bool = false) throws -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard fd >= 0, bound, !listening || listen(fd, 16) == 0 else {
        if fd >= 0 { Glibc.close(fd) }
        throw HarnessError("cannot find a free port")
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}

/// A free port of 127.0.0.1 (free when this returns; a server may take it).
func freeLoopbackPort() throws -> UInt16 {
    let (fd, port) = try boundLoopbackSocket()
    Glibc.close(fd)
    return port
}
