import Foundation
import Synchronization
import Testing
import UV

/// Runs `body` while `loop` runs on a dedicated thread; then stops the loop, closes every handle,
/// drains, and checks that the loop freed all of its handles.
func withRunningLoop<T>(_ body: (EventLoop) async throws -> T) async throws -> T {
    let loop = try EventLoop()
    let (finished, finishedContinuation) = AsyncStream<Int>.makeStream()
    let thread = Thread {
        loop.run()
        loop.closeAllHandlesAndDrain()
        finishedContinuation.yield(loop.liveHandleCount)
        finishedContinuation.finish()
    }
    thread.start()
    let result: Result<T, any Error>
    do {
        result = .success(try await body(loop))
    } catch {
        result = .failure(error)
    }
    loop.execute { loop.stop() }
    var remaining = -1
    for await count in finished { remaining = count }
    #expect(remaining == 0, "handles leaked by this loop")
    return try result.get()
}

/// Runs `body` on the loop thread and returns its result.
func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        loop.execute {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Resumes a continuation at most once (callbacks may fire more than once).
final class Once<T: Sendable>: @unchecked Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>
    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }
    func resume(_ result: Result<T, any Error>) {
        continuation.withLock { c in
            c?.resume(with: result)
            c = nil
        }
    }
    func resume(returning value: T) { resume(.success(value)) }
    func resume(throwing error: any Error) { resume(.failure(error)) }
}

/// Waits for `body` to call the `Once` it receives (on the loop thread).
func awaitOnLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable (Once<T>) throws -> Void) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let once = Once(continuation)
        loop.execute {
            do { try body(once) } catch { once.resume(throwing: error) }
        }
    }
}

/// Mutable state captured by loop-thread callbacks.
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// An actor that runs on the loop.
actor LoopActor {
    nonisolated let loop: EventLoop
    private(set) var count = 0
    private(set) var log: [Int] = []

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    func isOnLoopThread() -> Bool { loop.isCurrentThread }

    @discardableResult
    func bump() -> Int {
        count += 1
        return count
    }

    func append(_ value: Int) { log.append(value) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Connects a client to 127.0.0.1:`port` that appends everything it reads to `received`; at
/// end of stream or an error it closes and resumes `once` with `result()`. A failed connect
/// resumes `once` with an error. Loop thread only.
func connectReadingToEnd<T: Sendable>(loop: EventLoop, port: Int, once: Once<T>,
                                      received: @escaping ([UInt8]) -> Void, result: @escaping () -> T) {
    TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { connected in
        guard case .success(let client) = connected else {
            once.resume(throwing: TestFailure("connect failed: \(connected)"))
            return
        }
        client.startReading { event in
            switch event {
            case .data(let bytes):
                received(Array(bytes))
            case .eof, .error:
                client.close()
                once.resume(returning: result())
            }
        }
    }
}
