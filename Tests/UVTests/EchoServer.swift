import Foundation
import Testing
import UV

/// Starts an echo server on 127.0.0.1, port 0; returns its port.
func startEchoServer(_ loop: EventLoop) async throws -> Int {
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
func echo(_ loop: EventLoop, host: String = "127.0.0.1", port: Int, parts: [[UInt8]]) async throws -> [UInt8] {
    try await echo(loop, host: host, port: port, expecting: parts.reduce(0) { $0 + $1.count }) { connection in
        if parts.count == 1 { connection.write(parts[0]) } else { connection.write(parts) }
    }
}

/// Connects and makes each of `writes` one `write(gathering:)` call with all its parts at once
/// (not `write(_: [[UInt8]])`, which hands over 16 at a time), in the same loop turn; reads
/// back as many bytes as were written, closes.
func echo(_ loop: EventLoop, port: Int, writes: [[[UInt8]]]) async throws -> [UInt8] {
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
func echo(_ loop: EventLoop, host: String = "127.0.0.1", port: Int, expecting expected: Int,
                  send: @escaping @Sendable (TCPConnection) -> Void) async throws -> [UInt8] {
    try await awaitOnLoop(loop) { (once: Once<[UInt8]>) in
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            exchange(result, once: once, expecting: expected) { send($0) }
        }
    }
}

/// What `connect` gave: on success, reads until `expected` bytes came (then closes after what
/// was queued) or the peer closed, and resumes `once` with them; `send` writes once reading is
/// on. A failure resumes `once` with the error. TCP and TLS tests share it.
func exchange<Connection: StreamConnection>(_ result: Result<Connection, UVError>, once: Once<[UInt8]>, expecting expected: Int,
                                            send: (Connection) -> Void) {
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
                    connection.shutdownAndClose()
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

func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed &+ ($0 >> 8)) }
}

/// Carries a loop-thread-only listener out of and back into the loop.
struct UncheckedListener: @unchecked Sendable {
    let listener: TCPListener
    init(_ listener: TCPListener) { self.listener = listener }
}
