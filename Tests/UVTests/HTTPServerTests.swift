import Foundation
import Glibc
import Testing
import UV

/// A plain blocking client on the test's thread (the loop runs on its own).
private final class Client {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw TestFailure("connect: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    /// Sends everything; false when the server closed meanwhile.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var at = 0
        while at < bytes.count {
            let n = bytes[at...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            at += n
        }
        return true
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Everything until the server closes (or 10 s pass).
    func readToEnd() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads until `text` holds `count` responses (by their status lines), or the end.
    func readResponses(_ count: Int) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while String(decoding: out, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").count - 1 < count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Answers `GET /hello` with `hi <target>`, anything else 404; `/upgrade` takes the connection
/// over and echoes what follows.
private func handler(_ head: HTTPRequestHead) -> HTTPReply {
    switch head.path {
    case "/hello": return .respond(.text(200, "hi \(head.target)"))
    case "/upgrade":
        return .upgrade { connection, buffered in
            connection.write(Array("HTTP/1.1 101 Switching Protocols\r\n\r\n".utf8) + buffered)
            connection.startReading { event in
                switch event {
                case .data(let bytes): connection.write(Array(bytes))
                case .eof, .error: connection.shutdownAndClose()
                }
            }
        }
    default: return .respond(.text(404, "no \(head.path)"))
    }
}

private func withServer<T>(_ limits: HTTPLimits = HTTPLimits(),
                           _ body: (_ port: Int, _ server: @escaping @Sendable () async throws -> HTTPServerStatistics) async throws -> T) async throws -> T {
    try await withRunningLoop { loop in
        let box = try await onLoop(loop) { () -> UncheckedServer in
            let server = HTTPServer(loop: loop, listener: try TCPListener(loop: loop, host: "127.0.0.1", port: 0),
                                    limits: limits, handler: handler)
            try server.start()
            return UncheckedServer(server: server)
        }
        let port = try await onLoop(loop) { box.server.localAddress!.port }
        let result = try await body(port) { try await onLoop(loop) { box.server.statistics } }
        try await onLoop(loop) { box.server.close() }
        return result
    }
}

private struct UncheckedServer: @unchecked Sendable { let server: HTTPServer }

@Suite(.timeLimit(.minutes(1))) struct HTTPServerTests {
    @Test func keptAliveRequestsOneAfterAnother() async throws {
        try await withServer { port, stats in
            let client = try Client(port: port)
            client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let first = client.readResponses(1)
            #expect(first == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\n\r\nhi /hello\n")
            client.send("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.readResponses(1).hasPrefix("HTTP/1.1 404 Not Found\r\n"))
            client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(client.readToEnd() == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\nConnection: close\r\n\r\n",
                    "HEAD: the length of the body, no body, then closed as asked")
            #expect(try await stats().requests == 3)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withServer { port, _ in
            let client = try Client(port: port)
            let requests = (1...40).map { "GET /hello?\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined()
            client.send(requests + "GET /hello?last HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let text = client.readToEnd()
            let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix { $0 != "\n" } }
            #expect(bodies == (1...40).map { "hi /hello?\($0)" } + ["hi /hello?last"], "more than one turn's worth (16), in order")
        }
    }

    @Test func aHugeHeadIsRefusedAndTheClientReadsWhy() async throws {
        try await withServer { port, stats in
            let client = try Client(port: port)
            // 1 MB of header: refused after 8 KiB; the rest is read and dropped, so the client's
            // send completes and it reads the answer instead of a reset.
            let sent = client.send(Array("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: ".utf8) + [UInt8](repeating: 0x61, count: 1_000_000) + Array("\r\n\r\n".utf8))
            #expect(sent)
            let text = client.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
            #expect(text.contains("Connection: close\r\n"))
            #expect(text.hasSuffix("request head larger than 8192 bytes\n"))
            #expect(try await stats().badRequests == 1)
        }
    }

    @Test func aHeadOfExactlyTheLimitIsAnswered() async throws {
        try await withServer(HTTPLimits(maxHeadBytes: 200)) { port, _ in
            let start = "GET /hello HTTP/1.1\r\nHost: t\r\nX-Pad: "
            let head = start + String(repeating: "p", count: 200 - start.utf8.count - 4) + "\r\n\r\n"
            #expect(head.utf8.count == 200)
            let client = try Client(port: port)
            client.send(head)
            #expect(client.readResponses(1).hasPrefix("HTTP/1.1 200 OK\r\n"))
            let over = try Client(port: port)
            over.send(start + String(repeating: "p", count: 200 - start.utf8.count - 3) + "\r\n\r\n")
            #expect(over.readToEnd().hasPrefix("HTTP/1.1 431 "))
        }
    }

    @Test func binaryBytesGet400AndAClose() async throws {
        try await withServer { port, _ in
            let client = try Client(port: port)
            client.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 0xEE, count: 500))
            let text = client.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(text.contains("Connection: close\r\n"))
        }
    }

    @Test func aBodyOnGETIsAnsweredThenTheConnectionCloses() async throws {
        try await withServer { port, _ in
            let client = try Client(port: port)
            client.send("GET /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n" + String(repeating: "b", count: 20000)
                + "GET /hello?smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
            let text = client.readToEnd()
            #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\nConnection: close\r\n\r\nhi /hello\n",
                    "the body is not read as a request")
        }
    }

    @Test func http10IsAnsweredAndClosed() async throws {
        try await withServer { port, _ in
            let client = try Client(port: port)
            client.send("GET /hello HTTP/1.0\r\n\r\n")
            #expect(client.readToEnd().hasSuffix("Connection: close\r\n\r\nhi /hello\n"))
        }
    }

    @Test func http11WithoutHostGets400() async throws {
        try await withServer { port, _ in
            let client = try Client(port: port)
            client.send("GET /hello HTTP/1.1\r\n\r\n")
            #expect(client.readToEnd().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        }
    }

    @Test func aSlowHeadGets408() async throws {
        try await withServer(HTTPLimits(headTimeoutMilliseconds: 600)) { port, stats in
            let client = try Client(port: port)
            // A head trickled in and never finished: without the limit, readToEnd would wait
            // for its 10 s receive timeout and get nothing.
            for byte in Array("GET /hello".utf8) {
                guard client.send([byte]) else { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let text = client.readToEnd()
            #expect(text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
            #expect(try await stats().timeouts == 1)
            // Silence is closed too, without an answer.
            let silent = try Client(port: port)
            #expect(silent.readToEnd() == "")
        }
    }

    @Test func anIdleKeptAliveConnectionIsClosed() async throws {
        try await withServer(HTTPLimits(idleTimeoutMilliseconds: 500)) { port, _ in
            let client = try Client(port: port)
            client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let started = ContinuousClock.now
            let text = client.readToEnd()
            #expect(text.hasSuffix("hi /hello\n"))
            #expect(ContinuousClock.now - started >= .milliseconds(400))
        }
    }

    @Test func connectionsPastTheLimitGet503() async throws {
        try await withServer(HTTPLimits(maxConnections: 3)) { port, stats in
            let held = try (0..<3).map { _ in try Client(port: port) }
            try await Task.sleep(for: .milliseconds(100))
            let refused = try Client(port: port)
            #expect(refused.readToEnd().hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
            held[0].send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(held[0].readResponses(1).hasPrefix("HTTP/1.1 200 OK"), "the open ones are served")
            #expect(try await stats().refused == 1)
        }
    }

    @Test func aNewConnectionTakesTheSlotOfTheLongestIdleKeptAliveOne() async throws {
        try await withServer(HTTPLimits(maxConnections: 2)) { port, stats in
            let first = try Client(port: port), second = try Client(port: port)
            for client in [first, second] {
                client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(client.readResponses(1).hasPrefix("HTTP/1.1 200 OK"))
                try await Task.sleep(for: .milliseconds(50))
            }
            let third = try Client(port: port)
            third.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(third.readResponses(1).hasPrefix("HTTP/1.1 200 OK"), "served, not refused: two idle kept-alive ones were open")
            #expect(first.readToEnd() == "", "the one idle longest was closed for it")
            second.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(second.readResponses(1).hasPrefix("HTTP/1.1 200 OK"), "the other stays")
            let counts = try await stats()
            #expect(counts.idleClosedForRoom == 1 && counts.refused == 0)
        }
    }

    @Test func anUpgradeHandsTheConnectionOver() async throws {
        try await withServer(HTTPLimits(headTimeoutMilliseconds: 300)) { port, _ in
            let client = try Client(port: port)
            client.send("GET /upgrade HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nearly")
            #expect(client.readResponses(1) == "HTTP/1.1 101 Switching Protocols\r\n\r\nearly")
            try await Task.sleep(for: .milliseconds(700))
            client.send("late")
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            #expect(n == 4 && Array(buffer[0..<4]) == Array("late".utf8), "no HTTP limit applies after the upgrade")
            shutdown(client.fd, Int32(SHUT_WR))
            #expect(client.readToEnd() == "")
        }
    }
}
