import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Bad HTTP on the metrics port: each request is answered or its connection closed, and the
/// line protocol's port goes on answering meanwhile.
@Suite("Metrics listener under bad input", .timeLimit(.minutes(2)))
struct MetricsHostileInputTests {
    /// PING on the main port answers (checked while each kind of bad input is under way).
    static func mainPortAnswers(_ client: LineClient) async throws {
        let reply = try await client.command("PING still-here")
        #expect(reply.header.raw == "OK PONG still-here")
    }

    @Test func slowHugeBinaryBodiedAndOldRequests() async throws {
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: MetricsListenerTests.arguments) { daemon, _ in
            let port = try await metricsPort(daemon)
            let (client, _) = try await daemon.join()

            // Slowloris: a byte every 300 ms never makes a head within 5 s.
            async let slow = HTTPTestClient.exchange(port: port, Array("GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nX-D: 4\r\n".utf8),
                                                     pieces: 1, pause: .milliseconds(300))
            let started = ContinuousClock.now

            // A 1 MB header field: 431, then closed; the client's send completes (the rest is read and dropped).
            let huge = try await HTTPTestClient.exchange(
                port: port, Array("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ".utf8) + [UInt8](repeating: 0x61, count: 1 << 20) + Array("\r\n\r\n".utf8))
            #expect(huge.responses.map(\.status) == [431])
            #expect(huge.closed)
            try await Self.mainPortAnswers(client)

            // A request line of binary bytes: 400, closed.
            var binary: [UInt8] = [0x00, 0xFF, 0x16, 0x03, 0x01, 0x80]
            binary += (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let garbage = try await HTTPTestClient.exchange(port: port, binary + [13, 10, 13, 10])
            #expect(garbage.responses.map(\.status) == [400])
            #expect(garbage.closed)

            // GET /metrics with a body: answered, then closed (the body is never read as a request).
            let bodied = try await HTTPTestClient.exchange(
                port: port, Array("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n\r\n\r\n".utf8))
            #expect(bodied.responses.map(\.status) == [200])
            #expect(bodied.responses.first?.headers["connection"] == "close")
            #expect(bodied.closed)

            // HTTP/1.0: answered, then closed.
            let old = try await HTTPTestClient.exchange(port: port, Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
            #expect(old.responses.map(\.status) == [200])
            #expect(old.responses.first?.text == "ok\n")
            #expect(old.closed)

            // Pipelined: three requests in one write, three answers in order, on one connection.
            let pipelined = try await HTTPTestClient.exchange(port: port, Array(
                ("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8))
            #expect(pipelined.responses.map(\.status) == [200, 404, 200])
            #expect(pipelined.responses.last?.text.contains("pagesync_build_info{") == true)
            #expect(pipelined.closed)

            let slowloris = try await slow
            #expect(slowloris.responses.map(\.status) == [408])
            #expect(slowloris.closed)
            // Its answer at the 5 s head limit, the close after at most 2 s more of lingering
            // (the client keeps sending its bytes meanwhile); without the limit it would take 18 s.
            #expect(ContinuousClock.now - started < .seconds(12))
            try await Self.mainPortAnswers(client)
        }
    }

    @Test func aThousandSimultaneousScrapes() async throws {
        try await withDaemon(["deck.txt": Documents.formFeed(pages: 3)], arguments: MetricsListenerTests.arguments) { daemon, _ in
            let port = try await metricsPort(daemon)
            let (client, _) = try await daemon.join()
            async let storm = Self.scrapeAtOnce(port: port, connections: 1000)
            try await Self.mainPortAnswers(client)
            let outcomes = try await storm
            try await Self.mainPortAnswers(client)
            let answered = outcomes.filter { $0 == 200 }.count
            let refused = outcomes.filter { $0 == 503 }.count
            let closed = outcomes.filter { $0 == 0 }.count
            print("1,000 simultaneous scrapes: \(answered) answered 200, \(refused) answered 503, \(closed) closed without an answer")
            #expect(outcomes.count == 1000)
            #expect(answered + refused + closed == 1000, "each is answered or closed: \(Set(outcomes))")
            #expect(answered >= 1)
            // Still serving once they are gone.
            #expect(try await HTTPTestClient.get(port: port, "/healthz").status == 200)
        }
    }

    /// Opens `connections` connections at once, sends `GET /metrics` on each, and reads each until
    /// the server closes it or 30 s pass: the status of its answer, 0 for a close without one,
    /// -1 for neither.
    static func scrapeAtOnce(port: UInt16, connections: Int) async throws -> [Int] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingScrapes(port: port, connections: connections) })
            }
        }
    }

    private static func blockingScrapes(port: UInt16, connections: Int) throws -> [Int] {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(connections + 256) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(connections + 256))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        var fds: [Int32] = []
        defer { for fd in fds where fd >= 0 { Glibc.close(fd) } }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        for _ in 0..<connections {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw HarnessError("socket(): \(String(cString: strerror(errno)))") }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fds.append(fd)
        }
        var sent = [Bool](repeating: false, count: connections)
        var done = [Bool](repeating: false, count: connections)
        var received = [[UInt8]](repeating: [], count: connections)
        var closed = [Bool](repeating: false, count: connections)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + .seconds(30)
        while done.contains(false) && ContinuousClock.now < deadline {
            var polled = fds.indices.filter { !done[$0] }.map { pollfd(fd: fds[$0], events: Int16(sent[$0] ? POLLIN : POLLOUT), revents: 0) }
            let indices = fds.indices.filter { !done[$0] }
            guard poll(&polled, nfds_t(polled.count), 200) >= 0 || errno == EINTR else { throw HarnessError("poll: \(String(cString: strerror(errno)))") }
            for (slot, i) in indices.enumerated() where polled[slot].revents != 0 {
                if !sent[i] {
                    let n = request.withUnsafeBytes { Glibc.send(fds[i], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n == request.count { sent[i] = true } else if n < 0 && errno != EAGAIN { closed[i] = true; done[i] = true }
                    continue
                }
                let n = buffer.withUnsafeMutableBytes { recv(fds[i], $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    received[i] += buffer[0..<n]
                } else if n == 0 || errno != EAGAIN {
                    closed[i] = true
                    done[i] = true
                }
            }
        }
        return (0..<connections).map { i in
            if let first = HTTPTestClient.parse(received[i]).responses.first { return first.status }
            return closed[i] ? 0 : -1
        }
    }
}
