import CLibUV

/// A terminal stream (`uv_tty_t`), for the pager's keyboard. Loop thread only; not `Sendable`.
///
/// On a terminal, libuv reopens the device so that making it non-blocking does not affect other
/// processes (or other descriptors of this process) sharing the original open file; descriptor
/// `fd` then refers to the reopened device. The handle stays open (and this object alive) until
/// `close()`, even if you drop your reference; closing it closes `fd` unless it is 0, 1 or 2.
///
/// Modes: `setMode(.raw)` turns off echo, line buffering and signal keys (Ctrl-C and Ctrl-Z
/// arrive as bytes 0x03 and 0x1A) and output processing. libuv remembers the terminal's mode
/// from before the first mode change; `setMode(.normal)` and `TTY.resetMode()` restore it.
/// Restoring the mode restores termios only: leaving the alternate screen and showing the
/// cursor are the caller's job.
public final class TTY {
    /// How the terminal treats input.
    public enum Mode: Sendable {
        /// The mode the terminal had before (line editing, echo, signal keys).
        case normal
        /// Raw input: every byte as typed, no echo, no signals from keys.
        case raw
    }

    private let io: StreamIO
    private let handle: UnsafeMutablePointer<uv_tty_t>

    /// Opens descriptor `fd` (which must be a terminal, or at least a stream) for reading.
    /// Throws `EINVAL` for a file or an unknown kind of descriptor.
    public init(loop: EventLoop, fd: Int32) throws(UVError) {
        loop.assertOnLoopThread()
        let handle = HandleMemory.allocate(uv_tty_t.self, loop: loop)
        let result = uv_tty_init(loop.raw, handle, fd, 1)
        if result < 0 {
            HandleMemory.freeUninitialized(handle, loop: loop)
            throw UVError(code: result)
        }
        self.handle = handle
        self.io = StreamIO(loop: loop, stream: asStream(handle), isSocket: false)
    }

    /// Sets the terminal's mode. Throws e.g. `ENOTTY` when the descriptor is not a terminal.
    /// No effect (and no error) after `close()`.
    public func setMode(_ mode: Mode) throws(UVError) {
        io.loop.assertOnLoopThread()
        guard !io.isClosed else { return }
        try UVError.check(uv_tty_set_mode(handle, mode == .raw ? UV_TTY_MODE_RAW : UV_TTY_MODE_NORMAL))
    }

    /// Restores the mode the terminal had before this process first changed it
    /// (`uv_tty_reset_mode`). Async-signal-safe and callable from any thread, even without a
    /// handle; no effect when no mode was ever changed.
    public static func resetMode() {
        _ = uv_tty_reset_mode()
    }

    /// The terminal's size in character cells, or nil when it cannot be asked (not a terminal,
    /// closed).
    public var windowSize: (columns: Int, rows: Int)? {
        io.loop.assertOnLoopThread()
        guard !io.isClosed else { return nil }
        var width: Int32 = 0
        var height: Int32 = 0
        guard uv_tty_get_winsize(handle, &width, &height) == 0 else { return nil }
        return (Int(width), Int(height))
    }

    /// Starts reading; `onRead` gets `.data` chunks as typed (buffer valid only during the call),
    /// then at most one `.eof` or `.error`. Replaces a previous callback. No effect after `close()`.
    public func startReading(_ onRead: @escaping (StreamReadEvent) -> Void) { io.startReading(onRead) }

    /// Stops reading (`uv_read_stop`). The callback is kept for a later `startReading`.
    public func stopReading() { io.stopReading() }

    /// True while reading is started.
    public var isReading: Bool { io.isReading }

    /// True once `close()` was called.
    public var isClosed: Bool { io.isClosed }

    /// Writes `bytes` in order after everything written before (`uv_try_write` first, the rest
    /// queued). Ignored after close or after a write failure.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { io.write($0) } }

    /// Closes the handle. Idempotent. Does not change the terminal's mode: call
    /// `setMode(.normal)` first.
    public func close() { io.close() }
}
