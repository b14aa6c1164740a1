import Foundation
import Testing
import UV

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
}
