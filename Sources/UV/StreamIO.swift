import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a stream's read callback receives.
public enum StreamReadEvent {
    /// Bytes read. The buffer is valid only during the callback; copy what you keep.
    case data(UnsafeRawBufferPointer)
    /// The peer closed its sending side. No more `.data` follows; close the stream when done writing.
    case eof
    /// Reading or writing failed (e.g. `ECONNRESET`, `EPIPE`). Delivered at most once;
    /// nothing follows it. The stream stays open until you call `close()`.
    case error(UVError)
}

/// The reading/writing engine shared by `TCPConnection` and `TTY`. Owns the libuv stream handle:
/// `handle.data` holds a retained reference to this object until the close callback.
///
/// Write failures: the first failed write (synchronous or from the write callback, except
/// `ECANCELED` caused by closing) stops reading, drops all later writes, and is reported as
/// `.error` to the read callback on a later loop turn (never from inside `write`). If no read
/// callback is installed at that time, the error is delivered as soon as `startReading` is called.
final class StreamIO: UVHandleOwner {
    let loop: EventLoop
    let stream: UnsafeMutablePointer<uv_stream_t>
    private(set) var isClosed = false
    private(set) var isReading = false
    /// Set once a shutdown was requested: writes are ignored from then on.
    private var isShuttingDown = false
    /// Set by ``shutdownWrites()``: writes are ignored from then on; reading goes on.
    private var writesShut = false
    /// Bytes delivered to the read callback, and bytes accepted by the writes, since the
    /// stream was made (plain counters of the loop thread, read by metrics).
    private(set) var bytesRead: UInt64 = 0
    /// See ``bytesRead``.
    private(set) var bytesWritten: UInt64 = 0
    private var onRead: ((StreamReadEvent) -> Void)?
    var onWritesDrained: (() -> Void)?
    private var pendingWriteRequests = 0
    /// The first write failure; all later writes are ignored.
    private(set) var writeError: UVError?
    /// An error not yet delivered to the read callback.
    private var undeliveredError: UVError?
    private var errorDelivered = false
    /// Called by `close()` right before the handle is closed (fd still valid), for wrapper cleanup.
    var willClose: (() -> Void)?

    /// Whether the stream is a TCP socket, which ``tryWrite(_:_:)`` writes with `send(2)`.
    private let isSocket: Bool
    /// The socket's descriptor once it is connected; -1 before, and always for other streams.
    private var socketDescriptor: Int32 = -1

    /// Takes ownership of an initialized stream handle allocated with `HandleMemory.allocate`;
    /// `isSocket` for a TCP handle. The caller made the handle and says so: comparing its type
    /// with libuv's `UV_TCP` here stopped compiling in debug builds ("cannot find 'UV_TCP'")
    /// once this module also imported CHTTPParser, while release builds still found it.
    init(loop: EventLoop, stream: UnsafeMutablePointer<uv_stream_t>, isSocket: Bool) {
        self.loop = loop
        self.stream = stream
        self.isSocket = isSocket
        HandleMemory.attach(self, to: asHandle(stream))
    }

    // MARK: Reading

    func startReading(_ callback: @escaping (StreamReadEvent) -> Void) {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        onRead = callback
        if undeliveredError != nil {
            scheduleErrorDelivery()
            return
        }
        guard !isReading, !errorDelivered, writeError == nil else { return }
        let result = uv_read_start(stream, { handle, _, buffer in
            guard let handle, let buffer, let data = handle.pointee.loop.pointee.data else { return }
            let loop = Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue()
            loop.readCount &+= 1
            buffer.pointee = uv_buf_init(loop.readBuffer.baseAddress?.assumingMemoryBound(to: CChar.self),
                                         UInt32(loop.readBuffer.count))
        }, { stream, count, _ in
            guard let stream, let io = HandleMemory.owner(of: asHandle(stream), as: StreamIO.self) else { return }
            io.didRead(count)
        })
        if result < 0 {
            fail(UVError(code: result))
        } else {
            isReading = true
        }
    }

    func stopReading() {
        loop.assertOnLoopThread()
        guard isReading else { return }
        isReading = false
        if !isClosed { uv_read_stop(stream) }
    }

    private func didRead(_ count: Int) {
        if count > 0 {
            bytesRead &+= UInt64(count)
            let bytes = UnsafeRawBufferPointer(start: loop.readBuffer.baseAddress, count: count)
            onRead?(.data(bytes))
        } else if count == Int(UV_EOF.rawValue) {
            stopReading()
            onRead?(.eof)
        } else if count < 0 {
            stopReading()
            deliverError(UVError(code: Int32(count)))
        }
        // count == 0: EAGAIN-equivalent, nothing to do.
    }

    private func deliverError(_ error: UVError) {
        guard !errorDelivered, !isClosed else { return }
        errorDelivered = true
        undeliveredError = nil
        onRead?(.error(error))
    }

    /// Records a failure and reports it to the read callback on a later loop turn.
    private func fail(_ error: UVError) {
        guard !isClosed, !errorDelivered, undeliveredError == nil else { return }
        stopReading()
        undeliveredError = error
        if onRead != nil { scheduleErrorDelivery() }
    }

    private func scheduleErrorDelivery() {
        let box = UncheckedBox(self)
        loop.execute {
            let io = box.value
            guard let error = io.undeliveredError, io.onRead != nil else { return }
            io.deliverError(error)
        }
    }

    // MARK: Writing

    /// Bytes queued in libuv, not yet handed to the kernel.
    var writeQueueSize: Int {
        isClosed ? 0 : stream.pointee.write_queue_size  // the field libuv's getter returns, without the call
    }

    /// What one queued write holds beyond its bytes: its `uv_write_t` (192 bytes with libuv 1.44
    /// on x86_64) and two allocations' headers and rounding (the request's and the copy of the
    /// bytes'), about 256 bytes in all.
    static let queuedWriteOverhead = MemoryLayout<uv_write_t>.size + 64

    /// Memory the output queued in libuv holds: its bytes plus ``queuedWriteOverhead`` per
    /// queued write. A peer that does not read while it is sent many small replies (one
    /// `PONG` per command, each queued as its own write) holds about 50 times their bytes:
    /// back-pressure counts this, not ``writeQueueSize`` alone.
    var queuedMemory: Int {
        isClosed ? 0 : stream.pointee.write_queue_size + pendingWriteRequests * Self.queuedWriteOverhead
    }

    /// True when writes are currently accepted.
    private var acceptsWrites: Bool {
        !isClosed && !isShuttingDown && !writesShut && writeError == nil && undeliveredError == nil
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        loop.assertOnLoopThread()
        guard acceptsWrites, let base = bytes.baseAddress, bytes.count > 0 else { return }
        var buffer = uv_buf_init(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), UInt32(bytes.count))
        withUnsafeMutablePointer(to: &buffer) { pointer in
            write(UnsafeMutableBufferPointer(start: pointer, count: 1))
        }
    }

    /// See ``StreamWriter/writeIfIdle(_:)``.
    /// One `uv_try_write` when the kernel takes it all (the usual case), with none of the
    /// general path's bookkeeping; otherwise the general path queues the rest or records the error.
    func writeIfIdle(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard acceptsWrites, writeQueueSize == 0, let base = bytes.baseAddress, bytes.count > 0 else { return false }
        let result = tryWrite(base, bytes.count)
        if result > 0 { bytesWritten &+= UInt64(result) }
        if result == bytes.count { return true }
        write(result > 0 ? UnsafeRawBufferPointer(rebasing: bytes[result...]) : bytes)
        return true
    }

    /// One non-blocking write of `count` bytes, for a stream with nothing queued: what
    /// `uv_try_write` does, except that a TCP socket is written with `send(2)` rather than
    /// libuv's `write(2)`. On a socket the two do the same, but `send` skips the file layer
    /// (`fdget_pos`, `rw_verify_area`, `fsnotify`): 4 to 6% less kernel time per write on
    /// loopback, and a fan-out is one such write per follower. Returns the bytes the kernel
    /// took, `UV_EAGAIN` when it took none, or another negative libuv error.
    private func tryWrite(_ base: UnsafeRawPointer, _ count: Int) -> Int {
        if socketDescriptor < 0 {
            var fd = uv_os_fd_t(-1)
            guard isSocket, stream.pointee.connect_req == nil, uv_fileno(asHandle(stream), &fd) == 0 else {
                var buffer = uv_buf_init(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), UInt32(count))
                return Int(uv_try_write(stream, &buffer, 1))
            }
            socketDescriptor = fd
        }
        while true {
            let sent = send(socketDescriptor, base, count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            if sent >= 0 { return sent }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK, ENOBUFS: return Int(UV_EAGAIN.rawValue)
            case let code: return Int(-code)
            }
        }
    }

    /// Gathered writes of at most this many bytes in all are copied into one buffer first.
    static let smallGatherLimit = 512

    /// Writes the bytes `parts` point at, in order, gathered: one `uv_try_write` for up to 16
    /// of them (the rest in further ones, in order). Parts of at most ``smallGatherLimit``
    /// bytes in all (a navigation's `OK` and `PAGE`) are copied into one buffer on the stack
    /// and written as one: libuv then makes a `write(2)`, which costs the kernel less than a
    /// `writev(2)` of the pieces (it need not copy in and walk an iovec array). When writes
    /// are queued already, the bytes join the queue in one copy, as a single write's would.
    func write(gathering parts: UnsafeBufferPointer<UnsafeRawBufferPointer>) {
        loop.assertOnLoopThread()
        guard acceptsWrites else { return }
        if parts.count > 1 {
            var total = 0
            for part in parts { total += part.count }
            if total <= Self.smallGatherLimit {
                withUnsafeTemporaryAllocation(byteCount: total, alignment: 1) { buffer in
                    var at = 0
                    for part in parts {
                        guard let base = part.baseAddress, part.count > 0 else { continue }
                        (buffer.baseAddress! + at).copyMemory(from: base, byteCount: part.count)
                        at += part.count
                    }
                    write(UnsafeRawBufferPointer(buffer))
                }
                return
            }
        }
        let groupSize = 16
        withUnsafeTemporaryAllocation(of: uv_buf_t.self, capacity: groupSize) { buffers in
            var filled = 0
            for part in parts {
                guard let base = part.baseAddress, part.count > 0 else { continue }
                buffers[filled] = uv_buf_init(UnsafeMutableRawPointer(mutating: base).assumingMemoryBound(to: CChar.self),
                                              UInt32(part.count))
                filled += 1
                if filled == groupSize {
                    write(buffers)
                    filled = 0
                }
            }
            if filled > 0 { write(UnsafeMutableBufferPointer(rebasing: buffers[..<filled])) }
        }
    }

    /// uv_try_write everything at once; copy the remainder into one buffer owned by a uv_write_t.
    private func write(_ buffers: UnsafeMutableBufferPointer<uv_buf_t>) {
        guard acceptsWrites, let base = buffers.baseAddress else { return }
        let total = buffers.reduce(0) { $0 + Int($1.len) }
        guard total > 0 else { return }
        bytesWritten &+= UInt64(total)
        var written = 0
        if writeQueueSize == 0 {
            let result = buffers.count == 1 ? tryWrite(base.pointee.base, Int(base.pointee.len))
                                            : Int(uv_try_write(stream, base, UInt32(buffers.count)))
            if result >= 0 {
                written = result
            } else if result != Int(UV_EAGAIN.rawValue) && result != Int(UV_ENOSYS.rawValue) {
                fail(UVError(code: Int32(result)))
                return
            }
        }
        let remaining = total - written
        guard remaining > 0 else { return }

        guard let copy = malloc(remaining) else { fatalError("out of memory queueing \(remaining) bytes") }
        var skip = written
        var offset = 0
        for buffer in buffers {
            var length = Int(buffer.len)
            var source = UnsafeRawPointer(buffer.base!)
            if skip >= length { skip -= length; continue }
            source += skip
            length -= skip
            skip = 0
            (copy + offset).copyMemory(from: source, byteCount: length)
            offset += length
        }
        let request = HandleMemory.allocateRequest(uv_write_t.self)
        request.pointee.data = copy
        var buffer = uv_buf_init(copy.assumingMemoryBound(to: CChar.self), UInt32(remaining))
        let result = uv_write(request, stream, &buffer, 1) { request, status in
            guard let request else { return }
            free(request.pointee.data)
            let stream = request.pointee.handle
            HandleMemory.freeRequest(request)
            guard let stream, let io = HandleMemory.owner(of: asHandle(stream), as: StreamIO.self) else { return }
            io.didWrite(status: status)
        }
        if result < 0 {
            free(copy)
            HandleMemory.freeRequest(request)
            fail(UVError(code: result))
        } else {
            pendingWriteRequests += 1
        }
    }

    private func didWrite(status: Int32) {
        pendingWriteRequests -= 1
        if status < 0 {
            if status != UV_ECANCELED.rawValue { fail(UVError(code: status)) }
            return
        }
        if pendingWriteRequests == 0 && !isClosed && writeError == nil {
            onWritesDrained?()
        }
    }

    // MARK: Closing

    func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        onRead = nil
        onWritesDrained = nil
        let cleanup = willClose
        willClose = nil
        cleanup?()
        HandleMemory.close(asHandle(stream))
    }

    /// Sends a FIN once what was written has left (`uv_shutdown`), and keeps the stream open
    /// and reading: the peer sees the end of the output, and what it still sends is read.
    /// Later writes are ignored. Idempotent; ``shutdownAndClose()`` or ``close()`` ends it.
    func shutdownWrites() {
        loop.assertOnLoopThread()
        guard !isClosed, !isShuttingDown, !writesShut else { return }
        writesShut = true
        if writeQueueSize == 0 && pendingWriteRequests == 0 {
            var fd = uv_os_fd_t(-1)
            if uv_fileno(asHandle(stream), &fd) == 0 { _ = shutdown(fd, Int32(SHUT_WR)) }
            return
        }
        let request = HandleMemory.allocateRequest(uv_shutdown_t.self)
        if uv_shutdown(request, stream, { request, _ in
            if let request { HandleMemory.freeRequest(request) }
        }) < 0 {
            HandleMemory.freeRequest(request)
        }
    }

    /// Stops reading immediately; shuts the write side down and closes, after the queued writes
    /// (`uv_shutdown`) when there are any.
    ///
    /// When everything written is already with the kernel (the usual case: a reply or two that
    /// `uv_try_write` took), the write side is shut down and the handle closed at once, not on
    /// a later loop turn: libuv keeps accepting within one loop turn for as long as connections
    /// arrive, so connections refused with `ERR 503` each held their descriptor until the
    /// daemon ran out (EMFILE), and libuv then dropped the next connection without a word.
    func shutdownAndClose() {
        loop.assertOnLoopThread()
        guard !isClosed, !isShuttingDown else { return }
        stopReading()
        onRead = nil
        if writeQueueSize == 0 && pendingWriteRequests == 0 {
            var fd = uv_os_fd_t(-1)
            if uv_fileno(asHandle(stream), &fd) == 0 { _ = shutdown(fd, Int32(SHUT_WR)) }
            close()
            return
        }
        isShuttingDown = true
        let request = HandleMemory.allocateRequest(uv_shutdown_t.self)
        let result = uv_shutdown(request, stream) { request, _ in
            guard let request else { return }
            let stream = request.pointee.handle
            HandleMemory.freeRequest(request)
            guard let stream, let io = HandleMemory.owner(of: asHandle(stream), as: StreamIO.self) else { return }
            io.close()
        }
        if result < 0 {
            HandleMemory.freeRequest(request)
            close()
        }
    }
}

/// Carries a loop-thread-only value through a `@Sendable` closure that will run on the same loop thread.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
