import Foundation
import Testing
import UV

/// InputPolling on a real loop, with a client on its own thread speaking through a blocking
/// socket: quick round trips make the loop poll (its idle callback runs while it waits for the
/// client) and the polling stops when they do; with a limit no wait can be within, the loop never
/// polls although it counts every read.
@Suite(.timeLimit(.minutes(1)))
struct InputPollingTests {
    /// Starts an echo server and an InputPolling of `limit` on `loop`; returns the port.
    private func startEchoServer(_ loop: EventLoop, limit: UInt64, polling: Box<InputPolling?>, listener: Box<TCPListener?>) async throws -> Int {
        try await onLoop(loop) {
            polling.value = InputPolling(loop: loop, limitNanoseconds: limit)
            let server = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
            try server.listen { connection in
                connection.startReading { event in
                    if case .data(let bytes) = event { connection.write(bytes) } else { connection.close() }
                }
            }
            listener.value = server
            return server.localAddress!.port
        }
    }

    /// `rounds` one-byte round trips from a thread of its own, each byte sent `delay`
    /// nanoseconds after the previous echo (busy-waiting, so the client is quick while the loop
    /// runs out of work meanwhile). Returns the round trips completed.
    private func roundTrips(port: Int, rounds: Int, delay: UInt64) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard fd >= 0, connected == 0 else {
                    if fd >= 0 { close(fd) }
                    return continuation.resume(throwing: TestFailure("cannot connect to the echo server"))
                }
                var byte: UInt8 = 1
                var done = 0
                for _ in 0..<rounds {
                    let until = DispatchTime.now().uptimeNanoseconds + delay
                    while DispatchTime.now().uptimeNanoseconds < until {}
                    guard write(fd, &byte, 1) == 1, read(fd, &byte, 1) == 1 else { break }
                    done += 1
                }
                close(fd)
                continuation.resume(returning: done)
            }.start()
        }
    }

    @Test func quickRoundTripsArePolledForAndPollingStopsWithThem() async throws {
        try await withRunningLoop { loop in
            let polling = Box<InputPolling?>(nil)
            let listener = Box<TCPListener?>(nil)
            // A limit of 500 ms: however loaded the machine, these waits are within it.
            let port = try await startEchoServer(loop, limit: 500_000_000, polling: polling, listener: listener)
            let done = try await roundTrips(port: port, rounds: 200, delay: 50_000)
            #expect(done == 200)
            let (polled, looks) = try await onLoop(loop) { (polling.value?.iterationsPolled ?? -1, polling.value?.looks ?? -1) }
            #expect(polled > 0, "quick waits: the loop decided to poll")
            #expect(looks > 0, "and it did poll while it waited for the client")
            var stillPolling = true
            for _ in 0..<500 where stillPolling {
                try await Task.sleep(for: .milliseconds(10))
                stillPolling = try await onLoop(loop) { polling.value?.isPolling ?? false }
            }
            #expect(!stillPolling, "no more input: the window passes and the loop sleeps")
            try await onLoop(loop) {
                polling.value?.close()
                listener.value?.close()
            }
        }
    }

    @Test func inputSlowerThanTheLimitIsNeverPolledFor() async throws {
        try await withRunningLoop { loop in
            let polling = Box<InputPolling?>(nil)
            let listener = Box<TCPListener?>(nil)
            // A 1 ns limit: no wait is that short.
            let port = try await startEchoServer(loop, limit: 1, polling: polling, listener: listener)
            let readsBefore = try await onLoop(loop) { loop.readCount }
            let done = try await roundTrips(port: port, rounds: 200, delay: 50_000)
            #expect(done == 200)
            let (readsAfter, polled, looks) = try await onLoop(loop) {
                (loop.readCount, polling.value?.iterationsPolled ?? -1, polling.value?.looks ?? -1)
            }
            #expect(readsAfter - readsBefore >= 200, "every read was counted")
            #expect(polled == 0)
            #expect(looks == 0)
            try await onLoop(loop) {
                polling.value?.close()
                listener.value?.close()
            }
        }
    }
}
