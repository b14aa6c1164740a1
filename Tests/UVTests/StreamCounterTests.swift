import Testing
import UV

/// `bytesRead` and `bytesWritten`: what a connection read and accepted for writing, counted by
/// the stream itself (metrics read them).
@Suite(.timeLimit(.minutes(1))) struct StreamCounterTests {
    @Test func bothSidesCountEveryByte() async throws {
        try await withRunningLoop { loop in
            let counts = try await awaitOnLoop(loop) { (once: Once<[UInt64]>) in
                let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
                let server = Box<TCPConnection?>(nil)
                try listener.listen { connection in
                    server.value = connection
                    connection.startReading { event in
                        if case .data(let bytes) = event { connection.write(Array(bytes)) }
                    }
                }
                TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                    guard case .success(let client) = result else { return once.resume(throwing: TestFailure("connect")) }
                    var echoed = 0
                    client.startReading { event in
                        guard case .data(let bytes) = event else { return }
                        echoed += bytes.count
                        guard echoed == 3000, let server = server.value else { return }
                        once.resume(returning: [client.bytesWritten, client.bytesRead, server.bytesRead, server.bytesWritten])
                        client.close()
                        server.close()
                        listener.close()
                    }
                    client.write([UInt8](repeating: 1, count: 1000))
                    client.write([[UInt8](repeating: 2, count: 500), [UInt8](repeating: 3, count: 1500)])
                }
            }
            #expect(counts == [3000, 3000, 3000, 3000])
        }
    }
}
