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
        if let loopData = loop?.pointee.data {
            Unmanaged<EventLoop>.fromOpaque(loopData).takeUnretainedValue().handleCount.subtract(1, ordering: .relaxed)
        }
        UVHandles.handleCounter.subtract(1, ordering: .relaxed)
        #if canImport(Glibc)
        Glibc.free(handle)
        #else
        Darwin.free(handle)
        #endif
    }

    /// Frees memory for a handle whose `uv_*_init` failed (libuv never saw it).
    static func freeUninitialized<T>(_ handle: UnsafeMutablePointer<T>, loop: EventLoop) {
        loop.handleCount.subtract(1, ordering: .relaxed)
        UVHandles.handleCounter.subtract(1, ordering: .relaxed)
        #if canImport(Glibc)
        Glibc.free(handle)
        #else
        Darwin.free(handle)
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
        #if canImport(Glibc)
        Glibc.free(request)
        #else
        Darwin.free(request)
        #endif
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
