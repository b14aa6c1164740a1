import Dispatch
import Foundation
import PageSyncCore
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for the line protocol, the way a script or `nc` talks to pagesyncd.
///
/// Every blocking system call runs on the client's own serial dispatch queue, so a test waiting
/// for the daemon never blocks a thread of Swift's cooperative pool. Reads and writes give up
/// after `stepTimeoutSeconds` with a `HarnessError` that quotes what was received: a hang becomes a
/// failure, never a stuck test. Not thread-safe: one task uses a client at a time.
final class LineClient: @unchecked Sendable {
    /// A label for error messages ("client A").
    let label: String
    private let fd: Int32
    private let queue: DispatchQueue
    // The received bytes and the read position, guarded by `bufferLock`: a line can be taken on
    // the test's task (already buffered) or on the client's queue (after a recv), and both must
    // see the other's last change (ThreadSanitizer cannot see the order a continuation gives).
    private let bufferLock = NSLock()
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var scanIndex = 0
    private var closed = false
    /// PAGE events skipped by `readReply()`, oldest first.
    var skippedEvents: [ServerLine] = []
    /// Every line received so far (for error messages), capped to the last few hundred.
    private var history: [String] = []

    private init(fd: Int32, label: String) {
        self.fd = fd
        self.label = label
        self.queue = DispatchQueue(label: "e2e.client.\(label)")
    }

    deinit {
        if !closed { Glibc.close(fd) }
    }

    /// A client over an already connected stream socket `fd` (which it owns from now on), e.g.
    /// one end of a socket pair whose other end is a TLS filter process (see ``TLSLineClient``).
    static func adopting(fd: Int32, label: String) -> LineClient {
        var timeout = timeval(tv_sec: stepTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return LineClient(fd: fd, label: label)
    }

    /// Connects to `127.0.0.1:port`. `receiveBufferSize`, when given, is set before connecting so
    /// the kernel cannot hide a non-reading client behind a large, auto-tuned window.
    static func connect(port: UInt16, label: String = "client", receiveBufferSize: Int? = nil,
                        sendBufferSize: Int? = nil) async throws -> LineClient {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket(): \(String(cString: strerror(errno)))") }
        let client = LineClient(fd: fd, label: label)
        var timeout = timeval(tv_sec: stepTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let size = receiveBufferSize {
            var value = Int32(size)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        if let size = sendBufferSize {
            var value = Int32(size)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        try await client.onQueue {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else {
                throw HarnessError("\(label): connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
            }
        }
        return client
    }

    // MARK: Sending

    /// Sends `line` followed by LF.
    func send(_ line: String) async throws {
        try await sendRaw(Array(line.utf8) + [0x0A])
    }

    /// Sends `command` as the pager does (``CommandEncoder``).
    func send(_ command: Command) async throws {
        try await sendRaw(CommandEncoder.bytes(command))
    }

    /// Sends several lines in one write, each followed by LF.
    func send(lines: [String]) async throws {
        try await sendRaw(Array(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Sends exactly `bytes` (NUL, invalid UTF-8, huge lines...). Blocks until the kernel took them all.
    func sendRaw(_ bytes: [UInt8]) async throws {
        try await onQueue { try self.sendAllBlocking(bytes) }
    }

    /// Sends `bytes` without ever reading, until all are sent or the peer stops taking them for
    /// `stall` (it stopped reading us). Returns how many bytes the kernel accepted.
    func sendUntilStalled(_ bytes: [UInt8], stall: Duration = .milliseconds(500)) async throws -> Int {
        try await onQueue { try self.sendWithoutReading(bytes, stall: stall) }
    }

    /// Sends `line` (with its LF) again and again, each in a packet of its own (`TCP_NODELAY`,
    /// a short pause between sends), without ever reading, until the peer stops taking them for
    /// `stall` (it stopped reading us), or `limit` were sent. Returns how many were sent whole.
    func sendOnePerPacketUntilStalled(_ line: String, limit: Int, stall: Duration = .milliseconds(500)) async throws -> Int {
        let bytes = Array(line.utf8) + [0x0A]
        return try await onQueue {
            var on: Int32 = 1
            setsockopt(self.fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            var count = 0
            while count < limit {
                let sent = try self.sendWithoutReading(bytes, stall: stall)
                if sent == 0 { return count }
                guard sent == bytes.count else { throw HarnessError("\(self.label): stalled inside a line after \(count) lines") }
                count += 1
                usleep(20)
            }
            return count
        }
    }

    /// `sendUntilStalled`'s loop, on the client's queue.
    private func sendWithoutReading(_ bytes: [UInt8], stall: Duration) throws -> Int {
        let stallMilliseconds = Int32(stall.components.seconds * 1000 + stall.components.attoseconds / 1_000_000_000_000_000)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&pfd, 1, stallMilliseconds) == 0 { return sent }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            throw HarnessError("\(label): send failed after \(sent) bytes: \(String(cString: strerror(errno)))")
        }
        return sent
    }

    /// Sends all of `bytes` while reading whatever arrives into the client's buffer, so neither
    /// side can block the other. Use it to resume after `sendUntilStalled`.
    func sendWhileReading(_ bytes: [UInt8]) async throws {
        try await onQueue {
            var sent = 0
            var lastProgress = ContinuousClock.now
            while sent < bytes.count {
                if ContinuousClock.now - lastProgress > .seconds(stepTimeoutSeconds) {
                    throw HarnessError("\(self.label): no progress sending \(bytes.count - sent) more bytes")
                }
                var pfd = pollfd(fd: self.fd, events: Int16(POLLIN | POLLOUT), revents: 0)
                guard poll(&pfd, 1, 100) > 0 else { continue }
                if pfd.revents & Int16(POLLIN) != 0 {
                    if try self.receiveChunk(flags: Int32(MSG_DONTWAIT)) == false {
                        throw HarnessError("\(self.label): connection closed while sending")
                    }
                    lastProgress = .now
                }
                if pfd.revents & Int16(POLLOUT) != 0 {
                    let n = bytes.withUnsafeBytes {
                        Glibc.send(self.fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                    }
                    if n > 0 { sent += n; lastProgress = .now }
                }
                if pfd.revents & Int16(POLLERR | POLLHUP) != 0 && pfd.revents & Int16(POLLIN) == 0 {
                    throw HarnessError("\(self.label): connection error while sending")
                }
            }
        }
    }

    // MARK: Receiving

    /// The next line, without its LF (and a CR before it). Fails on timeout or end of stream.
    func readLine() async throws -> String {
        guard let line = try await readLineOrEOF() else {
            throw HarnessError("\(label): connection closed while waiting for a line; received so far:\n\(recentHistory)")
        }
        return line
    }

    /// The next line, or nil when the server closed the connection (FIN or reset) first.
    func readLineOrEOF() async throws -> String? {
        if let line = takeBufferedLine() { return line }
        return try await onQueue {
            while true {
                if let line = self.takeBufferedLine() { return line }
                guard try self.receiveChunk(flags: 0) else {
                    let rest = self.bufferLock.withLock { String(decoding: self.buffer[self.readIndex...], as: UTF8.self) }
                    if !rest.isEmpty {
                        throw HarnessError("\(self.label): connection closed in the middle of a line: \(rest.debugDescription)")
                    }
                    return nil
                }
            }
        }
    }

    /// Takes at most `count` bytes off the socket (blocking until at least one arrives), as a very
    /// slow reader would; they stay buffered for the line readers. Returns how many were taken.
    func trickle(_ count: Int) async throws -> Int {
        try await onQueue {
            var chunk = [UInt8](repeating: 0, count: count)
            let n = chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, count, 0) }
            guard n > 0 else { throw HarnessError("\(self.label): nothing to trickle (\(n))") }
            self.bufferLock.withLock { self.buffer.append(contentsOf: chunk[0..<n]) }
            return n
        }
    }

    /// Fails unless the server closes the connection before sending anything else.
    func expectClosed() async throws {
        if let line = try await readLineOrEOF() {
            throw HarnessError("\(label): expected the server to close the connection, got \(line.debugDescription)")
        }
    }

    /// Whether a byte arrives within `window`. Used only to tell "nothing more came" after an order
    /// based check (like `sync`) already established what must have come.
    func hasData(within window: Duration) async throws -> Bool {
        if bufferedByteCount > 0 { return true }
        let milliseconds = Int32(window.components.seconds * 1000 + window.components.attoseconds / 1_000_000_000_000_000)
        return try await onQueue {
            var pfd = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
            return poll(&pfd, 1, milliseconds) > 0
        }
    }

    /// The client's own (ephemeral) TCP port.
    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Bytes received but not yet returned as lines.
    var bufferedByteCount: Int { bufferLock.withLock { buffer.count - readIndex } }

    /// Half-closes: the server sees EOF, and can still answer.
    func shutdownWrite() {
        queue.sync { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Closes the socket with a TCP reset (SO_LINGER 0), as a crashed or vanished peer would.
    func abort() {
        queue.sync {
            guard !closed else { return }
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            closed = true
            Glibc.close(fd)
        }
    }

    /// Closes the socket (idempotent).
    func close() {
        queue.sync {
            if !closed { closed = true; Glibc.close(fd) }
        }
    }

    // MARK: Internals

    private var recentHistory: String {
        bufferLock.withLock { history.suffix(20) }.map { "  " + $0.debugDescription }.joined(separator: "\n")
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func sendAllBlocking(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw HarnessError("\(label): send blocked for \(stepTimeoutSeconds) s after \(sent) of \(bytes.count) bytes (the daemon stopped reading)")
            }
            throw HarnessError("\(label): send failed after \(sent) of \(bytes.count) bytes: \(String(cString: strerror(errno)))")
        }
    }

    /// Receives once into the buffer. Returns false at end of stream (FIN or reset).
    private func receiveChunk(flags: Int32) throws -> Bool {
        if closed { throw HarnessError("\(label): read on a closed client") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, flags) }
            if n > 0 {
                bufferLock.withLock { buffer.append(contentsOf: chunk[0..<n]) }
                return true
            }
            if n == 0 { return false }
            switch errno {
            case EINTR:
                continue
            case ECONNRESET:
                return false
            case EAGAIN, EWOULDBLOCK:
                if flags & Int32(MSG_DONTWAIT) != 0 { return true }
                throw HarnessError("\(label): no complete line within \(stepTimeoutSeconds) s; received so far:\n\(recentHistory)\n  partial: \(bufferLock.withLock { String(decoding: buffer[readIndex...], as: UTF8.self) }.debugDescription)")
            default:
                throw HarnessError("\(label): recv: \(String(cString: strerror(errno)))")
            }
        }
    }

    private func takeBufferedLine() -> String? {
        bufferLock.lock()
        defer { bufferLock.unlock() }
        guard let lf = buffer[scanIndex...].firstIndex(of: 0x0A) else {
            scanIndex = buffer.count
            return nil
        }
        var end = lf
        if end > readIndex && buffer[end - 1] == 0x0D { end -= 1 }
        let line = String(decoding: buffer[readIndex..<end], as: UTF8.self)
        readIndex = lf + 1
        scanIndex = readIndex
        if readIndex > 1 << 16 && readIndex * 2 > buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
            scanIndex = 0
        }
        history.append(line)
        if history.count > 400 { history.removeFirst(200) }
        return line
    }
}
