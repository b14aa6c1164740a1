import CLibUV
#if canImport(Glibc)
import Glibc
#endif

/// A libuv timer (`uv_timer_t`). Loop thread only; not `Sendable`.
///
/// The handle stays open (and this object alive) until `close()`, even if you drop your reference.
/// Note: in files that also import Foundation, spell it `UV.Timer`.
public final class Timer: UVHandleOwner {
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_timer_t>
    private var callback: (() -> Void)?
    private var repeats = false
    /// True once `close()` was called.
    public private(set) var isClosed = false

    /// Creates a stopped timer on `loop`.
    public init(loop: EventLoop) {
        loop.assertOnLoopThread()
        self.loop = loop
        handle = HandleMemory.allocate(uv_timer_t.self, loop: loop)
        let result = uv_timer_init(loop.raw, handle)
        precondition(result == 0, "uv_timer_init cannot fail, but did: \(UVError(code: result))")
        HandleMemory.attach(self, to: asHandle(handle))
    }

    /// (Re)starts the timer: `cb` runs on the loop thread after `afterMilliseconds`, then every
    /// `repeatMilliseconds` if that is non-zero, until `stop()` or `close()`. Replaces any previous
    /// schedule and callback. No effect after `close()`.
    public func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64 = 0, _ cb: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        callback = cb
        repeats = repeatMilliseconds > 0
        uv_timer_start(handle, { handle in
            guard let handle, let timer = HandleMemory.owner(of: asHandle(handle), as: Timer.self) else { return }
            timer.fire()
        }, afterMilliseconds, repeatMilliseconds)
    }

    private func fire() {
        let cb = callback
        if !repeats { callback = nil }  // a one-shot timer drops its callback (and what it captures)
        cb?()
    }

    /// True while the timer is scheduled.
    public var isActive: Bool { !isClosed && uv_is_active(asHandle(handle)) != 0 }

    /// Stops the timer; the callback is dropped. `start` may be called again. No effect after `close()`.
    public func stop() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        uv_timer_stop(handle)
        callback = nil
    }

    /// Stops and closes the timer. Idempotent; the memory is freed in the close callback.
    public func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        callback = nil
        HandleMemory.close(asHandle(handle))
    }
}

/// Watches a POSIX signal (`uv_signal_t`). Loop thread only; not `Sendable`.
///
/// The callback runs on the loop thread, not in signal context, so it may do anything.
/// Several deliveries before the loop gets to run may be coalesced into one call.
/// The handle stays open until `close()`, even if you drop your reference.
public final class SignalWatcher: UVHandleOwner {
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_signal_t>
    private var callback: (() -> Void)?
    /// True once `close()` was called.
    public private(set) var isClosed = false

    /// Starts watching `signal` (e.g. `SIGTERM`) and calls `cb` on the loop thread for each delivery.
    /// Throws when `uv_signal_start` fails (e.g. `EINVAL` for an invalid signal number).
    public init(loop: EventLoop, signal: Int32, _ cb: @escaping () -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        let handle = HandleMemory.allocate(uv_signal_t.self, loop: loop)
        let initResult = uv_signal_init(loop.raw, handle)
        if initResult < 0 {
            HandleMemory.freeUninitialized(handle, loop: loop)
            throw UVError(code: initResult)
        }
        let startResult = uv_signal_start(handle, { handle, _ in
            guard let handle, let watcher = HandleMemory.owner(of: asHandle(handle), as: SignalWatcher.self) else { return }
            watcher.callback?()
        }, signal)
        if startResult < 0 {
            HandleMemory.close(asHandle(handle))
            throw UVError(code: startResult)
        }
        self.loop = loop
        self.handle = handle
        self.callback = cb
        HandleMemory.attach(self, to: asHandle(handle))
    }

    /// Whether this watcher keeps the loop alive (`uv_ref`/`uv_unref`). Default true.
    public var keepsLoopAlive: Bool {
        get { !isClosed && uv_has_ref(asHandle(handle)) != 0 }
        set {
            guard !isClosed else { return }
            if newValue { uv_ref(asHandle(handle)) } else { uv_unref(asHandle(handle)) }
        }
    }

    /// Stops watching and closes. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        callback = nil
        HandleMemory.close(asHandle(handle))
    }

    /// Closes the watcher and ignores its signal from then on (`SIG_IGN`). libuv puts back the
    /// default action when the last watcher of a signal closes, so a late SIGTERM or SIGINT
    /// would otherwise end a process that is finishing its stop, before it is done.
    public func closeIgnoringLaterSignals() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        let signalNumber = handle.pointee.signum
        close()  // uv_close stops the watcher now: the default action is back from here
        signal(signalNumber, SIG_IGN)
    }
}

/// Runs a callback once per loop iteration, right before the loop blocks for I/O (`uv_prepare_t`;
/// Redis's `beforeSleep`): the place to flush output batched during the iteration.
/// Loop thread only; not `Sendable`. The handle stays open until `close()`.
///
/// A prepare hook does not keep the loop alive by itself (it is `uv_unref`'d) and does not
/// make the loop spin: the loop still blocks for I/O right after the hook returns.
public final class PrepareHook: UVHandleOwner {
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_prepare_t>
    private var callback: (() -> Void)?
    /// True once `close()` was called.
    public private(set) var isClosed = false

    /// Starts calling `cb` on every loop iteration, before the loop polls for I/O.
    public init(loop: EventLoop, _ cb: @escaping () -> Void) {
        loop.assertOnLoopThread()
        self.loop = loop
        handle = HandleMemory.allocate(uv_prepare_t.self, loop: loop)
        callback = cb
        let result = uv_prepare_init(loop.raw, handle)
        precondition(result == 0, "uv_prepare_init cannot fail, but did: \(UVError(code: result))")
        HandleMemory.attach(self, to: asHandle(handle))
        uv_prepare_start(handle) { handle in
            guard let handle, let hook = HandleMemory.owner(of: asHandle(handle), as: PrepareHook.self) else { return }
            hook.callback?()
        }
        uv_unref(asHandle(handle))
    }

    /// Stops the hook and closes it. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        callback = nil
        HandleMemory.close(asHandle(handle))
    }
}

/// Watches a file or directory for changes (`uv_fs_event_t`, inotify on Linux). Loop thread only.
///
/// The callback gets the name of the changed entry (for a watched directory, the file inside it;
/// for a watched file, usually its own name) or nil when the platform does not say. Editors
/// often replace a file by renaming a new one over it; the watch then follows the old inode and
/// goes quiet, so watch the containing directory to survive that (and filter by name).
/// The handle stays open until `close()`.
public final class FileWatcher: UVHandleOwner {
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_fs_event_t>
    private var callback: ((String?) -> Void)?
    /// True once `close()` was called.
    public private(set) var isClosed = false

    /// Starts watching `path`; `cb` runs on the loop thread for each change or rename event
    /// (events may be coalesced or duplicated: treat it as "something changed, re-check").
    /// Throws e.g. `ENOENT` when `path` does not exist.
    public init(loop: EventLoop, path: String, _ cb: @escaping (_ filename: String?) -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        let handle = HandleMemory.allocate(uv_fs_event_t.self, loop: loop)
        let initResult = uv_fs_event_init(loop.raw, handle)
        if initResult < 0 {
            HandleMemory.freeUninitialized(handle, loop: loop)
            throw UVError(code: initResult)
        }
        let startResult = uv_fs_event_start(handle, { handle, filename, _, status in
            guard let handle, status >= 0,
                  let watcher = HandleMemory.owner(of: asHandle(handle), as: FileWatcher.self) else { return }
            watcher.callback?(filename.map { String(cString: $0) })
        }, path, 0)
        if startResult < 0 {
            HandleMemory.close(asHandle(handle))
            throw UVError(code: startResult)
        }
        self.loop = loop
        self.handle = handle
        self.callback = cb
        HandleMemory.attach(self, to: asHandle(handle))
    }

    /// Stops watching and closes. Idempotent.
    public func close() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        isClosed = true
        callback = nil
        HandleMemory.close(asHandle(handle))
    }
}
