import Foundation
import Testing
import UV

/// InputPolling on a real loop with a real TCP connection: quick round trips make the loop
/// poll; when input stops, the polling stops; input slower than the limit is never polled for.
@Suite(.timeLimit(.minutes(1)))
struct InputPollingTests {
    /// `rounds` one-byte round trips between a client and an echo server on `loop`, both on the
    /// loop, with an InputPolling of `limit`; returns the iterations it polled.
    private func pingPong(_ loop: EventLoop, rounds: Int, limit: UInt64, polling: Box<InputPolling?>) async throws -> Int {
        try await awaitOnLoop(loop) { (once: Once<Int>) in
            polling.value = InputPolling(loop: loop, limitNanoseconds: limit)
            let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
            try listener.listen { connection in
                connection.startReading { event in
                    if case .data(let bytes) = event { connection.write(bytes) } else { connection.close() }
                }
            }
            TCPConnection.connect(loop: loop, host: "127.0.0.1", port: listener.localAddress!.port) { result in
                guard case .success(let connection) = result else { return once.resume(throwing: TestFailure("no connection")) }
                let done = Box(0)
                connection.startReading { event in
                    guard case .data(let bytes) = event else { return once.resume(throwing: TestFailure("connection ended")) }
                    done.value += bytes.count
                    if done.value < rounds {
                        connection.write([1])
                    } else {
                        connection.close()
                        listener.close()
                        once.resume(returning: polling.value?.iterationsPolled ?? -1)
                    }
                }
                connection.write([1])
            }
        }
    }

    @Test func quickRoundTripsArePolledForAndPollingStopsWithThem() async throws {
        try await withRunningLoop { loop in
            let polling = Box<InputPolling?>(nil)
            // A limit of 500 ms: however loaded the machine, these waits are within it.
            let polled = try await pingPong(loop, rounds: 200, limit: 500_000_000, polling: polling)
            #expect(polled > 0, "quick waits: the loop polls")
            var stillPolling = true
            for _ in 0..<500 where stillPolling {
                try await Task.sleep(for: .milliseconds(10))
                stillPolling = try await onLoop(loop) { polling.value?.isPolling ?? false }
            }
            #expect(!stillPolling, "no more input: the window passes and the loop sleeps")
            try await onLoop(loop) { polling.value?.close() }
        }
    }

    @Test func inputSlowerThanTheLimitIsNeverPolledFor() async throws {
        try await withRunningLoop { loop in
            let polling = Box<InputPolling?>(nil)
            // A 1 ns limit: no wait is that short.
            let polled = try await pingPong(loop, rounds: 200, limit: 1, polling: polling)
            #expect(polled == 0)
            try await onLoop(loop) { polling.value?.close() }
        }
    }
}
