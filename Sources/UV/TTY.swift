import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A terminal stream (`uv_tty_t`): stdin for keys (`TTY.input`), stdout for output (`TTY.output`).
/// Loop thread only; not `Sendable`. The handle stays open until `close()`.
///
/// libuv reopens a terminal fd (same number, new open file description) so that making it
/// non-blocking does not affect other processes sharing the terminal. Writes work like
/// `TCPConnection`'s: never blocking, queued when the terminal is slow, in order.
///
/// Restoring the terminal is the caller's job on every exit path: `TTY.resetMode()` restores the
/// termios saved when raw mode was first entered, but escape sequences (leave the alternate
/// screen `ESC[?1049l`, show the cursor `ESC[?25h`) must be written too, e.g. with
/// `TTY.writeSynchronously(_:fd:)`, which does not depend on the loop running.
public final class TTY {
    /// Terminal line discipline.
    public enum Mode: Sendable {
        /// Cooked mode: line editing, echo, Ctrl-C raises SIGINT.
        case normal
        /// Raw mode: every key byte arrives as typed (Ctrl-C is 0x03, Ctrl-Z is 0x1A), no echo,
        /// no output post-processing (write "\r\n", not "\n").
        case raw
    }

    /// What the read callback receives (same as `TCPConnection.ReadEvent`).
    public typealias ReadEvent = StreamReadEvent

    private let io: StreamIO
    private let handle: UnsafeMutablePointer<uv_tty_t>
    private let modeState = ModeState()

    /// Opens `fd` as a terminal stream; `readable` for input. Throws `EINVAL` when `fd` is a
    /// regular file or not open. A pipe is accepted (reads and writes work; modes do not).
    /// The handle owns `fd`: closing it closes `fd`, except for the standard fds 0, 1 and 2.
    public init(loop: EventLoop, fd: Int32, readable: Bool) throws(UVError) {
        loop.assertOnLoopThread()
        let handle = HandleMemory.allocate(uv_tty_t.self, loop: loop)
        let result = uv_tty_init(loop.raw, handle, fd, readable ? 1 : 0)
        if result < 0 {
            HandleMemory.freeUninitialized(handle, loop: loop)
            throw UVError(code: result)
        }
        self.handle = handle
        io = StreamIO(loop: loop, stream: asStream(handle))
        io.willClose = { [handle, modeState] in
            if modeState.mode == .raw { _ = uv_tty_set_mode(handle, UV_TTY_MODE_NORMAL) }
        }
    }

    /// Standard input (fd 0), for reading keys.
    public static func input(loop: EventLoop) throws(UVError) -> TTY {
        try TTY(loop: loop, fd: 0, readable: true)
    }

    /// Standard output (fd 1), for drawing.
    public static func output(loop: EventLoop) throws(UVError) -> TTY {
        try TTY(loop: loop, fd: 1, readable: false)
    }

    /// True when `fd` is a terminal (`uv_guess_handle` says `UV_TTY`).
    public static func isTerminal(fd: Int32) -> Bool {
        uv_guess_handle(fd) == UV_TTY
    }

    /// Switches the terminal mode (`uv_tty_set_mode`). The first switch away from `.normal`
    /// saves the original termios for `resetMode()`. Throws e.g. when `fd` is not a terminal.
    public func setMode(_ mode: Mode) throws(UVError) {
        io.loop.assertOnLoopThread()
        guard !io.isClosed else { throw .invalidArgument }
        try UVError.check(uv_tty_set_mode(handle, mode == .raw ? UV_TTY_MODE_RAW : UV_TTY_MODE_NORMAL))
        modeState.mode = mode
    }

    /// The mode last set with `setMode` (`.normal` initially).
    public var mode: Mode { modeState.mode }

    /// Restores the terminal settings saved when raw mode was first entered
    /// (`uv_tty_reset_mode`). Safe to call from any thread, at exit, and more than once; does
    /// nothing if raw mode was never entered. Returns false when libuv could not do it (EBUSY).
    @discardableResult
    public static func resetMode() -> Bool {
        uv_tty_reset_mode() == 0
    }

    /// The terminal size in character cells, or nil when it is unknown (not a terminal, closed).
    public var windowSize: (columns: Int, rows: Int)? {
        guard !io.isClosed else { return nil }
        var width: Int32 = 0
        var height: Int32 = 0
        guard uv_tty_get_winsize(handle, &width, &height) == 0, width > 0, height > 0 else { return nil }
        return (Int(width), Int(height))
    }

    /// Starts reading (input only); `onRead` gets `.data` (key bytes, valid only during the
    /// call; escape sequences may be split across calls), then at most one `.eof` or `.error`.
    public func startReading(_ onRead: @escaping (ReadEvent) -> Void) { io.startReading(onRead) }

    /// Stops reading; the callback is kept for a later `startReading`.
    public func stopReading() { io.stopReading() }

    /// True while reading is started.
    public var isReading: Bool { io.isReading }

    /// Writes `bytes` after everything written before, without blocking (queued if needed).
    /// Ignored after close and after a write failure (reported to the read callback, if any).
    public func write(_ bytes: UnsafeRawBufferPointer) { io.write(bytes) }

    /// Writes `bytes`; see `write(_: UnsafeRawBufferPointer)`.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { io.write($0) } }

    /// Writes the UTF-8 bytes of `text`; see `write(_: UnsafeRawBufferPointer)`.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { io.write(UnsafeRawBufferPointer($0)) }
    }

    /// Bytes queued in libuv, not yet taken by the terminal.
    public var writeQueueSize: Int { io.writeQueueSize }

    /// Called when queued writes all completed; see `TCPConnection.onWritesDrained`.
    public var onWritesDrained: (() -> Void)? {
        get { io.onWritesDrained }
        set { io.onWritesDrained = newValue }
    }

    /// Closes the handle (idempotent). If this handle put the terminal in raw mode, it is set
    /// back to normal first. Queued writes are dropped: flush before closing if they matter.
    /// Standard fds (0, 1, 2) stay open.
    public func close() { io.close() }

    /// Writes all of `bytes` to `fd` with plain `write(2)`, waiting (`poll`) whenever the fd is
    /// non-blocking and full. For exit paths (restoring the screen) where the loop may not run
    /// again. Thread-safe. Returns false on an error other than `EINTR`/`EAGAIN`.
    @discardableResult
    public static func writeSynchronously(_ bytes: [UInt8], fd: Int32 = 1) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 1_000)
                } else {
                    return false
                }
            }
            return true
        }
    }
}

/// The mode a TTY handle is in; shared with its close hook, which may outlive the `TTY` object.
private final class ModeState {
    var mode: TTY.Mode = .normal
}

/// `write(2)`, named apart from `TTY.write`.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}
