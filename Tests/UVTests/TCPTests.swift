import Foundation
import Testing
import UV

/// Starts an echo server on 127.0.0.1, port 0; returns its port.
private func startEchoServer(_ loop: EventLoop) async throws -> Int {
    try await onLoop(loop) {
        let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
        try listener.listen { connection in
            connection.startReading { event in
                switch event {
                case .data(let bytes): connection.write(bytes)
                case .eof: connection.shutdownAndClose()
                case .error: connection.close()
                }
            }
        }
        return listener.localAddress!.port
    }
}

/// Connects, writes `parts` (one write, or one gathered write), reads back as many bytes (or
/// until EOF), closes.
private func echo(_ loop: EventLoop, host: String = "127.0.0.1", port: Int, parts: [[UInt8]]) async throws -> [UInt8] {
    try await echo(loop, host: host, port: port, expecting: parts.reduce(0) { $0 + $1.count }) { connection in
        if parts.count == 1 { connection.write(parts[0]) } else { connection.write(parts) }
    }
}

/// Connects and makes each of `writes` one `write(gathering:)` call with all its parts at once
/// (not `write(_: [[UInt8]])`, which hands over 16 at a time), in the same loop turn; reads
/// back as many bytes as were written, closes.
private func echo(_ loop: EventLoop, port: Int, writes: [[[UInt8]]]) async throws -> [UInt8] {
    try await echo(loop, port: port, expecting: writes.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }) { connection in
        for parts in writes {
            let buffers = parts.map { part -> UnsafeMutableRawBufferPointer in
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: part.count, alignment: 1)
                buffer.copyBytes(from: part)
                return buffer
            }
            buffers.map { UnsafeRawBufferPointer($0) }.withUnsafeBufferPointer { connection.write(gathering: $0) }
            for buffer in buffers { buffer.deallocate() }
        }
    }
}

/// Connects, starts reading, lets `send` write, and returns what came back once `expected`
/// bytes did (or at EOF); closes.
private func echo(_ loop: EventLoop, host: String = "127.0.0.1", port: Int, expecting expected: Int,
                  send: @escaping @Sendable (TCPConnection) -> Void) async throws -> [UInt8] {
    try await awaitOnLoop(loop) { (once: Once<[UInt8]>) in
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            switch result {
            case .failure(let error):
                once.resume(throwing: error)
            case .success(let connection):
                let received = Box([UInt8]())
                connection.startReading { event in
                    switch event {
                    case .data(let bytes):
                        received.value.append(contentsOf: bytes)
                        if received.value.count >= expected {
                            connection.close()
                            once.resume(returning: received.value)
                        }
                    case .eof, .error:
                        connection.close()
                        once.resume(returning: received.value)
                    }
                }
                send(connection)
            }
        }
    }
}

private func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed &+ ($0 >> 8)) }
}

@Suite("TCP")
struct TCPTests {
    @Test func bytesRoundTripThroughAnEchoServer() async throws {
        try await withRunningLoop { loop in
            let port = try await startEchoServer(loop)
            #expect(port > 0)
            let reply = try await echo(loop, port: port, parts: [Array("hello, pagesync\n".utf8)])
            #expect(reply == Array("hello, pagesync\n".utf8))
        }
    }

    @Test func gatheredWritesArriveInOrder() async throws {
        try await withRunningLoop { loop in
            let port = try await startEchoServer(loop)
            let parts = (0..<40).map { pattern(1_000 + $0 * 37, seed: $0) }
            let reply = try await echo(loop, port: port, parts: parts)
            #expect(reply == parts.flatMap { $0 })
        }
    }

    /// Small gathered writes are copied into one buffer (``TCPConnection/smallGatherLimit``): every
    /// byte arrives, in order, at the limit, one past it, with empty parts, with every part
    /// empty, and with more parts than one `uv_try_write` takes (all handed over at once), and
    /// also when they queue behind a large write the kernel did not take at once.
    @Test func smallGatheredWritesArriveWholeAndInOrder() async throws {
        try await withRunningLoop { loop in
            let port = try await startEchoServer(loop)
            let limit = TCPConnection.smallGatherLimit
            let cases: [[[UInt8]]] = [
                [pattern(27, seed: 1), pattern(88, seed: 2)],  // an OK and a PAGE
                [pattern(1, seed: 3), [], pattern(5, seed: 4), []],
                [pattern(limit - 100, seed: 5), pattern(100, seed: 6)],  // exactly the limit
                [pattern(limit - 100, seed: 7), pattern(101, seed: 8)],  // one past it
                (0..<40).map { pattern(3 + $0 % 5, seed: 9 + $0) },  // 40 parts, 200 bytes
            ]
            for parts in cases {
                let reply = try await echo(loop, port: port, writes: [parts])
                #expect(reply == parts.flatMap { $0 }, "parts of \(parts.map(\.count))")
            }
            // Nothing at all, then an OK and a PAGE; and small writes behind 4 MiB.
            let pair = [pattern(27, seed: 50), pattern(88, seed: 51)]
            #expect(try await echo(loop, port: port, writes: [[[], []], pair]) == pair.flatMap { $0 })
            let writes = [[pattern(4 << 20, seed: 52)], pair, [pattern(7, seed: 53), pattern(9, seed: 54)], pair]
            #expect(try await echo(loop, port: port, writes: writes) == writes.flatMap { $0.flatMap { $0 } })
        }
    }

    @Test func localhostAndIPv6Work() async throws {
        try await withRunningLoop { loop in
            let port = try await startEchoServer(loop)
            let viaLocalhost = try await echo(loop, host: "localhost", port: port, parts: [[1, 2, 3]])
            #expect(viaLocalhost == [1, 2, 3])

            let v6: (port: Int, host: String)? = try? await onLoop(loop) {
                let listener = try TCPListener(loop: loop, host: "::1", port: 0)
                try listener.listen { connection in
                    connection.startReading { event in
                        if case .data(let bytes) = event { connection.write(bytes) } else { connection.close() }
                    }
                }
                let address = listener.localAddress!
                return (address.port, address.host)
            }
            if let v6 {  // hosts without IPv6 loopback skip this part
                #expect(v6.host == "::1")
                let reply = try await echo(loop, host: "[::1]", port: v6.port, parts: [[9, 8, 7]])
                #expect(reply == [9, 8, 7])
            }
        }
    }

    /// Connecting by name goes through uv_getaddrinfo. The machine's own host name normally
    /// resolves to one of its addresses (a listener on 0.0.0.0 accepts it); where it does not
    /// resolve, the failure must be a resolver error, not a crash or a hang.
    @Test func connectingByHostNameResolvesIt() async throws {
        let hostName = ProcessInfo.processInfo.hostName
        try await withRunningLoop { loop in
            let port = try await onLoop(loop) { () -> Int in
                let listener = try TCPListener(loop: loop, host: "0.0.0.0", port: 0)
                try listener.listen { connection in
                    connection.startReading { event in
                        if case .data(let bytes) = event { connection.write(bytes) } else { connection.close() }
                    }
                }
                return listener.localAddress!.port
            }
            do {
                let reply = try await echo(loop, host: hostName, port: port, parts: [[4, 5, 6]])
                #expect(reply == [4, 5, 6])
            } catch let error as UVError {
                #expect(error.name.hasPrefix("EAI_"), "connecting to \(hostName) failed: \(error)")
            }
        }
    }

    @Test func invalidHostIsRejected() async throws {
        try await withRunningLoop { loop in
            let error = try await onLoop(loop) { () -> UVError? in
                do throws(UVError) {
                    _ = try TCPListener(loop: loop, host: "not an address", port: 0)
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error == .invalidArgument)
        }
    }

    @Test func connectionRefusedIsReported() async throws {
        try await withRunningLoop { loop in
            // A port that is bound but not listening: connecting is refused, and no test
            // running in parallel can take the port meanwhile (it would if we closed it).
            let (port, bound) = try await onLoop(loop) { () -> (Int, UncheckedListener) in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                return (listener.localAddress!.port, UncheckedListener(listener))
            }
            defer { loop.execute { bound.listener.close() } }
            let outcome: UVError? = try await awaitOnLoop(loop) { once in
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
                    switch result {
                    case .success(let connection):
                        connection.close()
                        once.resume(returning: nil)
                    case .failure(let error):
                        once.resume(returning: error)
                    }
                }
            }
            #expect(outcome == .connectionRefused)
        }
    }

    struct LargeWriteOutcome: Sendable {
        var queuedAfterWrite = 0
        var drained = false
        var queueAfterDrain = -1
        var received: [UInt8] = []
    }

    @Test func largeWritesAreQueuedAndFullyDelivered() async throws {
        let size = 16 * 1024 * 1024
        // A prime-length block repeated, so misordered or lost chunks show up.
        let block = pattern(4_093)
        var payload = [UInt8]()
        payload.reserveCapacity(size)
        while payload.count < size { payload.append(contentsOf: block.prefix(size - payload.count)) }
        try await withRunningLoop { loop in
            let outcome: LargeWriteOutcome = try await awaitOnLoop(loop) { [payload] once in
                let state = Box(LargeWriteOutcome())
                state.value.received.reserveCapacity(size)
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    server.onWritesDrained = {
                        state.value.drained = true
                        state.value.queueAfterDrain = server.writeQueueSize
                        server.shutdownAndClose()
                    }
                    // Written in three calls while the client is not reading yet.
                    server.write(Array(payload[0..<1000]))
                    server.write([Array(payload[1000..<5000]), Array(payload[5000..<(size / 2)])])
                    payload[(size / 2)...].withUnsafeBytes { server.write($0) }
                    state.value.queuedAfterWrite = server.writeQueueSize
                }
                connectReadingToEnd(loop: loop, port: listener.localAddress!.port, once: once,
                                    received: { state.value.received.append(contentsOf: $0) }, result: { state.value })
            }
            #expect(outcome.queuedAfterWrite > 0, "the kernel took everything; the queue path was not exercised")
            #expect(outcome.drained)
            #expect(outcome.queueAfterDrain == 0)
            #expect(outcome.received.count == size)
            let same = outcome.received.withUnsafeBytes { received in
                payload.withUnsafeBytes { memcmp(received.baseAddress!, $0.baseAddress!, size) == 0 }
            }
            #expect(same, "received bytes differ from the payload")
        }
    }

    @Test func shutdownAndCloseFlushesQueuedWritesFirst() async throws {
        let size = 8 * 1024 * 1024
        try await withRunningLoop { loop in
            let (received, queued): (Int, Int) = try await awaitOnLoop(loop) { once in
                let queued = Box(0)
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    server.write([UInt8](repeating: 0x2A, count: size))
                    queued.value = server.writeQueueSize
                    server.shutdownAndClose()
                    server.write([1])  // ignored: the stream is shutting down
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    guard case .success(let client) = result else {
                        once.resume(throwing: TestFailure("connect failed"))
                        return
                    }
                    let count = Box(0)
                    client.startReading { event in
                        switch event {
                        case .data(let bytes):
                            count.value += bytes.count
                            if bytes.contains(where: { $0 != 0x2A }) { count.value = -size }
                        case .eof, .error:
                            client.close()
                            once.resume(returning: (count.value, queued.value))
                        }
                    }
                }
            }
            #expect(queued > 0)
            #expect(received == size)
        }
    }

    /// A reply the kernel took whole is followed by an immediate close, not one on a later loop
    /// turn: a connection refused in libuv's accept loop must not keep its descriptor while
    /// more connections are accepted (EMFILE). The peer still gets the bytes, then EOF.
    @Test func shutdownAndCloseWithNothingQueuedClosesAtOnce() async throws {
        try await withRunningLoop { loop in
            let (closedAtOnce, received): (Bool, String) = try await awaitOnLoop(loop) { once in
                let closedAtOnce = Box(false)
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    server.write(Array("ERR 503 server full\n".utf8))
                    server.shutdownAndClose()
                    closedAtOnce.value = server.isClosed
                }
                let received = Box([UInt8]())
                connectReadingToEnd(loop: loop, port: listener.localAddress!.port, once: once,
                                    received: { received.value += $0 },
                                    result: { (closedAtOnce.value, String(decoding: received.value, as: UTF8.self)) })
            }
            #expect(closedAtOnce, "closed only on a later loop turn")
            #expect(received == "ERR 503 server full\n")
        }
    }

    @Test func peerCloseIsReportedAsEOF() async throws {
        try await withRunningLoop { loop in
            let events: [String] = try await awaitOnLoop(loop) { once in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                let port = listener.localAddress!.port
                try listener.listen { server in
                    listener.close()
                    server.write(Array("BYE\n".utf8))
                    server.shutdownAndClose()
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
                    guard case .success(let client) = result else {
                        once.resume(throwing: TestFailure("connect failed"))
                        return
                    }
                    let events = Box([client.peerDescription])
                    client.startReading { event in
                        switch event {
                        case .data(let bytes): events.value.append(String(decoding: bytes, as: UTF8.self))
                        case .eof:
                            events.value.append("EOF")
                            client.close()
                            once.resume(returning: events.value)
                        case .error(let error):
                            events.value.append("error \(error)")
                            client.close()
                            once.resume(returning: events.value)
                        }
                    }
                }
            }
            #expect(events.first?.hasPrefix("127.0.0.1:") == true)
            #expect(events.dropFirst().joined().hasPrefix("BYE\n"))
            #expect(events.last == "EOF")
        }
    }

    @Test func writingToAClosedPeerReportsAnErrorWithoutCrashing() async throws {
        try await withRunningLoop { loop in
            let error: UVError = try await awaitOnLoop(loop) { once in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    server.close()
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    guard case .success(let client) = result else {
                        once.resume(throwing: TestFailure("connect failed"))
                        return
                    }
                    let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
                    let timer = UV.Timer(loop: loop)
                    let attempts = Box(0)
                    client.startReading { event in
                        switch event {
                        case .data: break
                        case .eof:
                            // The peer is gone: keep writing until the failure comes back.
                            timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
                                attempts.value += 1
                                client.write(chunk)
                                if attempts.value > 10_000 {
                                    timer.close()
                                    client.close()
                                    once.resume(throwing: TestFailure("no write error after 10000 writes"))
                                }
                            }
                        case .error(let error):
                            timer.close()
                            client.write(chunk)  // ignored
                            client.close()
                            client.write(chunk)  // ignored after close
                            once.resume(returning: error)
                        }
                    }
                }
            }
            #expect(error == .brokenPipe || error == .connectionReset)
        }
    }

    /// What output queued for a peer that does not read holds: each small write queued on its
    /// own counts its bookkeeping too (back-pressure pauses on this, not on the bytes alone).
    @Test func queuedOutputMemoryCountsEachQueuedWrite() async throws {
        struct Figures: Sendable {
            var bytesBefore = 0, memoryBefore = 0, bytesAfter = 0, memoryAfter = 0, memoryAfterClose = -1
        }
        try await withRunningLoop { loop in
            let figures: Figures = try await awaitOnLoop(loop) { once in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    var f = Figures()
                    server.write([UInt8](repeating: 1, count: 16 * 1024 * 1024))  // the kernel takes part of it
                    f.bytesBefore = server.writeQueueSize
                    f.memoryBefore = server.queuedOutputMemory
                    for _ in 0..<1000 { server.write(Array("PONG\n".utf8)) }  // each queued on its own
                    f.bytesAfter = server.writeQueueSize
                    f.memoryAfter = server.queuedOutputMemory
                    server.close()
                    f.memoryAfterClose = server.queuedOutputMemory
                    once.resume(returning: f)
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    if case .success(let client) = result { _ = client }  // never reads
                }
            }
            #expect(figures.bytesBefore > 0, "the kernel took all 16 MiB; nothing was queued")
            #expect(figures.memoryBefore > figures.bytesBefore, "the queued write's bookkeeping counts")
            #expect(figures.bytesAfter - figures.bytesBefore == 5000)
            // 1,000 queued writes of 5 bytes: at least their uv_write_t each beyond the bytes.
            #expect(figures.memoryAfter - figures.memoryBefore >= 1000 * (5 + 192), "\(figures)")
            #expect(figures.memoryAfter - figures.memoryBefore <= 1000 * (5 + 512), "\(figures)")
            #expect(figures.memoryAfterClose == 0)
        }
    }

    @Test func closingWithQueuedWritesCancelsThem() async throws {
        try await withRunningLoop { loop in
            let queued: Int = try await awaitOnLoop(loop) { once in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    server.write([UInt8](repeating: 1, count: 16 * 1024 * 1024))
                    let queued = server.writeQueueSize
                    server.close()  // cancels the queued write
                    server.close()  // idempotent
                    once.resume(returning: queued)
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    if case .success(let client) = result {
                        // Never reads; closed by closeAllHandlesAndDrain at the end.
                        _ = client
                    }
                }
            }
            #expect(queued > 0)
        }
    }
}

/// Carries a loop-thread-only listener out of and back into the loop.
struct UncheckedListener: @unchecked Sendable {
    let listener: TCPListener
    init(_ listener: TCPListener) { self.listener = listener }
}
