import Foundation
import Testing
import UV

/// Writing: queues, gathers of several sizes, shutdown and close with output pending, a peer that
/// went away.
extension TCPTests {
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
