import CLibUV
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debug counters for leak tests: libuv handles and requests this module allocated and has not freed yet.
///
/// A handle is counted from the moment its memory is allocated until its close callback frees it,
/// so a handle that was `close()`d but whose loop has not run the close callback yet is still live.
/// The counters are process-wide; `EventLoop.liveHandleCount` counts the handles of one loop.
public enum UVHandles {
    /// Handles (`uv_tcp_t`, `uv_timer_t`, the loop's internal `uv_async_t`, ...) allocated and not yet freed.
    public static var liveCount: Int { handleCounter.load(ordering: .relaxed) }

    /// Requests (`uv_write_t`, `uv_connect_t`, `uv_shutdown_t`, `uv_getaddrinfo_t`) allocated and not yet freed.
    public static var liveRequestCount: Int { requestCounter.load(ordering: .relaxed) }

    static let handleCounter = Atomic<Int>(0)
    static let requestCounter = Atomic<Int>(0)
}

/// Implemented by every handle wrapper so that `EventLoop.closeAllHandlesAndDrain()` can close
/// handles through their owner (which also drops the owner's callbacks).
protocol UVHandleOwner: AnyObject {
    /// Same contract as the public `close()`: idempotent, loop thread only.
    func close()
}

/// Reinterprets a pointer to a concrete handle type as its `uv_handle_t` header.
@inline(__always)
func asHandle<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutablePointer<uv_handle_t>(OpaquePointer(pointer))
}

/// Reinterprets a pointer to a stream handle (`uv_tcp_t`, `uv_tty_t`) as `uv_stream_t`.
@inline(__always)
func asStream<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutablePointer<uv_stream_t>(OpaquePointer(pointer))
}

/// Allocation and release of handle memory, keeping the counters honest.
enum HandleMemory {
    /// Zeroed memory for one handle of type `T`, counted in `UVHandles.liveCount` and in `loop`'s count.
    static func allocate<T>(_ type: T.Type, loop: EventLoop) -> UnsafeMutablePointer<T> {
        guard let raw = calloc(1, MemoryLayout<T>.size) else { fatalError("out of memory allocating \(T.self)") }
        UVHandles.handleCounter.add(1, ordering: .relaxed)
        loop.handleCount.add(1, ordering: .relaxed)
        return raw.bindMemory(to: T.self, capacity: 1)
    }

    /// Frees handle memory. Only for memory that libuv no longer references (after the close callback,
    /// or for a handle whose `uv_*_init` failed).
    static func free(_ handle: UnsafeMutablePointer<uv_handle_t>, loop: UnsafeMutablePointer<uv_loop_t>?) {
        release(handle, countedIn: loop?.pointee.data.map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() })
    }

    /// Frees memory for a handle whose `uv_*_init` failed (libuv never saw it).
    static func freeUninitialized<T>(_ handle: UnsafeMutablePointer<T>, loop: EventLoop) {
        release(handle, countedIn: loop)
    }

    /// Frees one handle's memory and takes it off the counters (the process's and `loop`'s).
    private static func release(_ memory: UnsafeMutableRawPointer, countedIn loop: EventLoop?) {
        loop?.handleCount.subtract(1, ordering: .relaxed)
        UVHandles.handleCounter.subtract(1, ordering: .relaxed)
        systemFree(memory)
    }

    /// The C library's free(3).
    private static func systemFree(_ memory: UnsafeMutableRawPointer) {
        #if canImport(Glibc)
        Glibc.free(memory)
        #else
        Darwin.free(memory)
        #endif
    }

    /// Zeroed memory for one request of type `T`, counted in `UVHandles.liveRequestCount`.
    static func allocateRequest<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        guard let raw = calloc(1, MemoryLayout<T>.size) else { fatalError("out of memory allocating \(T.self)") }
        UVHandles.requestCounter.add(1, ordering: .relaxed)
        return raw.bindMemory(to: T.self, capacity: 1)
    }

    /// Frees a request allocated with `allocateRequest`.
    static func freeRequest<T>(_ request: UnsafeMutablePointer<T>) {
        UVHandles.requestCounter.subtract(1, ordering: .relaxed)
        systemFree(request)
    }

    /// Sets `handle.data` to a retained reference to `owner`. The reference is released in
    /// the close callback installed by `close(_:)`.
    static func attach(_ owner: AnyObject, to handle: UnsafeMutablePointer<uv_handle_t>) {
        handle.pointee.data = Unmanaged<AnyObject>.passRetained(owner).toOpaque()
    }

    /// The owner attached with `attach`, without changing its retain count.
    static func owner<T: AnyObject>(of handle: UnsafeMutablePointer<uv_handle_t>, as type: T.Type) -> T? {
        guard let data = handle.pointee.data else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? T
    }

    /// Starts closing `handle` (unless it is already closing). The close callback releases the
    /// owner reference stored in `data` (if any) and frees the memory.
    static func close(_ handle: UnsafeMutablePointer<uv_handle_t>) {
        guard uv_is_closing(handle) == 0 else { return }
        uv_close(handle) { handle in
            guard let handle else { return }
            if let data = handle.pointee.data {
                handle.pointee.data = nil
                Unmanaged<AnyObject>.fromOpaque(data).release()
            }
            HandleMemory.free(handle, loop: handle.pointee.loop)
        }
    }
}

/// One libuv handle of type `H` (`uv_timer_t`, `uv_signal_t`, ...) as its wrapper object keeps
/// it: the one place where a handle is allocated and initialized, started or set up with its
/// failure undone, tied to its owner, and closed once. Loop thread only.
///
/// The memory is libuv's from `uv_*_init` on: a handle that was initialized is freed only in
/// the close callback `close()` installs (``HandleMemory/close(_:)``), never directly.
struct OwnedHandle<H> {
    let loop: EventLoop
    let pointer: UnsafeMutablePointer<H>
    /// True once `close()` was called.
    private(set) var isClosed = false

    /// Allocates a handle and initializes it with `initialize` (its `uv_*_init`); on failure
    /// frees it (libuv never saw it) and throws.
    init(loop: EventLoop, initialize: (UnsafeMutablePointer<uv_loop_t>, UnsafeMutablePointer<H>) -> Int32) throws(UVError) {
        loop.assertOnLoopThread()
        let pointer = HandleMemory.allocate(H.self, loop: loop)
        let result = initialize(loop.raw, pointer)
        if result < 0 {
            HandleMemory.freeUninitialized(pointer, loop: loop)
            throw UVError(code: result)
        }
        self.loop = loop
        self.pointer = pointer
    }

    /// The same for a handle whose `uv_*_init` cannot fail (`uv_timer_init`, `uv_prepare_init`):
    /// a failure is a bug, and stops the process naming `name`.
    init(loop: EventLoop, infallible name: StaticString,
         initialize: (UnsafeMutablePointer<uv_loop_t>, UnsafeMutablePointer<H>) -> Int32) {
        do {
            try self.init(loop: loop, initialize: initialize)
        } catch {
            preconditionFailure("\(name) cannot fail, but did: \(error)")
        }
    }

    /// The handle's `uv_handle_t` header.
    var handle: UnsafeMutablePointer<uv_handle_t> { asHandle(pointer) }

    /// Runs a step that may fail after the init (`uv_*_start`, a bind, an open); on failure
    /// closes the handle and throws.
    mutating func setUp(_ step: (UnsafeMutablePointer<H>) -> Int32) throws(UVError) {
        let result = step(pointer)
        if result < 0 {
            close()
            throw UVError(code: result)
        }
    }

    /// Ties the handle to `owner`: callbacks find it with ``HandleMemory/owner(of:as:)``, and it
    /// stays alive until the handle's close callback.
    func attach(_ owner: AnyObject) {
        HandleMemory.attach(owner, to: handle)
    }

    /// Starts closing the handle, once: false when it was already closed (nothing done).
    @discardableResult
    mutating func close() -> Bool {
        loop.assertOnLoopThread()
        guard !isClosed else { return false }
        isClosed = true
        HandleMemory.close(handle)
        return true
    }
}
