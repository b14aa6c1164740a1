import Testing
import UV

/// What the server side saw of ``StreamWriter/writeIfIdle(_:)``.
private struct DirectWriteOutcome: Sendable {
    var idleWrite = false
    var writeWhileQueued = true
    var queuedBefore = 0
    var queuedAfter = 0
    var writeAfterClose = true
    var received: [UInt8] = []
}

@Suite("StreamWriter")
struct StreamWriterTests {
    @Test func writesOnlyWhileNothingIsQueued() async throws {
        let line = Array("PAGE demo page=2\n".utf8)
        try await withRunningLoop { loop in
            let outcome: DirectWriteOutcome = try await awaitOnLoop(loop) { once in
                let state = Box(DirectWriteOutcome())
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                try listener.listen { server in
                    listener.close()
                    guard let writer = server.directWriter else {
                        once.resume(throwing: TestFailure("a plaintext connection has no direct writer"))
                        return
                    }
                    // Idle socket: the line goes out, as with write.
                    state.value.idleWrite = line.withUnsafeBytes { writer.writeIfIdle($0) }
                    // The client does not read yet: a large write fills the kernel and queues in libuv.
                    server.write([UInt8](repeating: 0x2E, count: 16 * 1024 * 1024))
                    state.value.queuedBefore = server.writeQueueSize
                    state.value.writeWhileQueued = line.withUnsafeBytes { writer.writeIfIdle($0) }
                    state.value.queuedAfter = server.writeQueueSize
                    server.close()
                    state.value.writeAfterClose = line.withUnsafeBytes { writer.writeIfIdle($0) }
                }
                connectReadingToEnd(loop: loop, port: listener.localAddress!.port, once: once,
                                    received: { state.value.received.append(contentsOf: $0) }, result: { state.value })
            }
            #expect(outcome.idleWrite, "an idle socket takes the line")
            #expect(outcome.queuedBefore > 0, "the kernel took everything; the queued case was not exercised")
            #expect(!outcome.writeWhileQueued, "with output queued the line is refused")
            #expect(outcome.queuedAfter == outcome.queuedBefore, "a refused line adds nothing to the queue")
            #expect(!outcome.writeAfterClose, "a closed stream refuses")
            #expect(Array(outcome.received.prefix(line.count)) == line, "the line arrived first, intact")
            #expect(!outcome.received.dropFirst(line.count).contains(0x50), "no second copy of the line arrived")
        }
    }
}
