import CLibUV
#if canImport(Glibc)
import Glibc
#endif

/// A libuv timer (`uv_timer_t`). Loop thread only; not `Sendable`.
///
/// The handle stays open (and this object alive) until `close()`, even if you drop your reference.
/// Note: in files that also import Foundation, spell it `UV.Timer`.
public final class Timer: UVHandleOwner {
    private var handle: OwnedHandle<uv_timer_t>
    private var callback: (() -> Void)?
    private var repeats = false
    /// True once `close()` was called.
    public var isClosed: Bool { handle.isClosed }

    /// Creates a stopped timer on `loop`.
    public init(loop: EventLoop) {
        handle = OwnedHandle(loop: loop, infallible: "uv_timer_init", initialize: uv_timer_init)
        handle.attach(self)
    }

    /// (Re)starts the timer: `cb` runs on the loop thread after `afterMilliseconds`, then every
    /// `repeatMilliseconds` if that is non-zero, until `stop()` or `close()`. Replaces any previous
    /// schedule and callback. No effect after `close()`.
    public func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64 = 0, _ cb: @escaping () -> Void) {
        handle.loop.assertOnLoopThread()
        guard !isClosed else { return }
        callback = cb
        repeats = repeatMilliseconds > 0
        uv_timer_start(handle.pointer, { handle in
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
    public var isActive: Bool { !isClosed && uv_is_active(handle.handle) != 0 }

    /// Stops the timer; the callback is dropped. `start` may be called again. No effect after `close()`.
    public func stop() {
        handle.loop.assertOnLoopThread()
        guard !isClosed else { return }
        uv_timer_stop(handle.pointer)
        callback = nil
    }

    /// Stops and closes the timer. Idempotent; the memory is freed in the close callback.
    public func close() {
        if handle.close() { callback = nil }
    }
}

/// Watches a POSIX signal (`uv_signal_t`). Loop thread only; not `Sendable`.
///
/// The callback runs on the loop thread, not in signal context, so it may do anything.
/// Several deliveries before the loop gets to run may be coalesced into one call.
/// The handle stays open until `close()`, even if you drop your reference.
public final class SignalWatcher: UVHandleOwner {
    private var handle: OwnedHandle<uv_signal_t>
    private var callback: (() -> Void)?
    /// True once `close()` was called.
    public var isClosed: Bool { handle.isClosed }

    /// Starts watching `signal` (e.g. `SIGTERM`) and calls `cb` on the loop thread for each delivery.
    /// Throws when `uv_signal_start` fails (e.g. `EINVAL` for an invalid signal number).
    public init(loop: EventLoop, signal: Int32, _ cb: @escaping () -> Void) throws(UVError) {
        var handle = try OwnedHandle<uv_signal_t>(loop: loop, initialize: uv_signal_init)
        try handle.setUp { handle in
            uv_signal_start(handle, { handle, _ in
                guard let handle, let watcher = HandleMemory.owner(of: asHandle(handle), as: SignalWatcher.self) else { return }
                watcher.callback?()
            }, signal)
        }
        self.handle = handle
        self.callback = cb
        handle.attach(self)
    }

    /// Whether this watcher keeps the loop alive (`uv_ref`/`uv_unref`). Default true.
    public var keepsLoopAlive: Bool {
        get { !isClosed && uv_has_ref(handle.handle) != 0 }
        set {
            guard !isClosed else { return }
            if newValue { uv_ref(handle.handle) } else { uv_unref(handle.handle) }
        }
    }

    /// Stops watching and closes. Idempotent.
    public func close() {
        if handle.close() { callback = nil }
    }

    /// Closes the watcher and ignores its signal from then on (`SIG_IGN`). libuv puts back the
    /// default action when the last watcher of a signal closes, so a late SIGTERM or SIGINT
    /// would otherwise end a process that is finishing its stop, before it is done.
    public func closeIgnoringLaterSignals() {
        handle.loop.assertOnLoopThread()
        guard !isClosed else { return }
        let signalNumber = handle.pointer.pointee.signum
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
    private var handle: OwnedHandle<uv_prepare_t>
    private var callback: (() -> Void)?
    /// True once `close()` was called.
    public var isClosed: Bool { handle.isClosed }

    /// Starts calling `cb` on every loop iteration, before the loop polls for I/O.
    public init(loop: EventLoop, _ cb: @escaping () -> Void) {
        handle = OwnedHandle(loop: loop, infallible: "uv_prepare_init", initialize: uv_prepare_init)
        callback = cb
        handle.attach(self)
        uv_prepare_start(handle.pointer) { handle in
            guard let handle, let hook = HandleMemory.owner(of: asHandle(handle), as: PrepareHook.self) else { return }
            hook.callback?()
        }
        uv_unref(handle.handle)
    }

    /// Stops the hook and closes it. Idempotent.
    public func close() {
        if handle.close() { callback = nil }
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
    private var handle: OwnedHandle<uv_fs_event_t>
    private var callback: ((String?) -> Void)?
    /// True once `close()` was called.
    public var isClosed: Bool { handle.isClosed }

    /// Starts watching `path`; `cb` runs on the loop thread for each change or rename event
    /// (events may be coalesced or duplicated: treat it as "something changed, re-check").
    /// Throws e.g. `ENOENT` when `path` does not exist.
    public init(loop: EventLoop, path: String, _ cb: @escaping (_ filename: String?) -> Void) throws(UVError) {
        var handle = try OwnedHandle<uv_fs_event_t>(loop: loop, initialize: uv_fs_event_init)
        try handle.setUp { handle in
            uv_fs_event_start(handle, { handle, filename, _, status in
                guard let handle, status >= 0,
                      let watcher = HandleMemory.owner(of: asHandle(handle), as: FileWatcher.self) else { return }
                watcher.callback?(filename.map { String(cString: $0) })
            }, path, 0)
        }
        self.handle = handle
        self.callback = cb
        handle.attach(self)
    }

    /// Stops watching and closes. Idempotent.
    public func close() {
        if handle.close() { callback = nil }
    }
}
