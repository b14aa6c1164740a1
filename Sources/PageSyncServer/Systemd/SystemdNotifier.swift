#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PageSyncCore
import UV

/// A native `sd_notify(3)`: sends state notifications to the service manager as one `AF_UNIX`
/// datagram per message to the socket named by `NOTIFY_SOCKET`.
///
/// - `NOTIFY_SOCKET` may be a filesystem path (`/run/systemd/notify`) or an abstract-namespace
///   name written with a leading `@` (sent with a leading NUL byte instead).
/// - When `NOTIFY_SOCKET` is unset, empty, of another kind (e.g. `vsock:`), or too long for
///   `sun_path`, the notifier is disabled and every method is a silent no-op returning false.
/// - Sending never blocks for long and never raises SIGPIPE; a failed send is reported by
///   the return value only, because a daemon must not stop over a missing service manager.
///
/// The socket is created once (`SOCK_DGRAM | SOCK_CLOEXEC`) and closed on deinit. `sendto(2)`
/// is thread-safe, so one notifier may be used from any thread or task.
public final class SystemdNotifier: Sendable {
    /// `NOTIFY_SOCKET` as found in the environment, or nil when the notifier is disabled.
    public let socketName: String?

    private let fd: Int32
    /// `sockaddr_un` bytes and the length to pass to `sendto`.
    private let address: [UInt8]
    private let addressLength: socklen_t

    /// Reads `NOTIFY_SOCKET` from `environment` (the process environment by default).
    /// Does not unset it: the daemon starts no children that could misuse it.
    public init(environment: [String: String] = SystemdEnvironment.current()) {
        guard let name = environment["NOTIFY_SOCKET"],
              let (address, length) = Self.socketAddress(for: name) else {
            (socketName, fd, address, addressLength) = (nil, -1, [], 0)
            return
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else {
            (socketName, self.fd, self.address, addressLength) = (nil, -1, [], 0)
            return
        }
        (socketName, self.fd, self.address, addressLength) = (name, fd, address, length)
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// True when `NOTIFY_SOCKET` named a usable socket, i.e. messages are really sent.
    public var isEnabled: Bool { fd >= 0 }

    /// Sends one message. Returns true when the kernel accepted the whole datagram; false when
    /// disabled or on any error (e.g. nobody listening: `ECONNREFUSED`/`ENOENT`).
    @discardableResult
    public func send(_ message: NotifyMessage) -> Bool {
        guard fd >= 0 else { return false }
        let bytes = message.bytes
        let sent = address.withUnsafeBytes { addressBytes in
            bytes.withUnsafeBytes { payload -> Int in
                let destination = addressBytes.baseAddress!.assumingMemoryBound(to: sockaddr.self)
                while true {
                    #if canImport(Glibc)
                    let flags = Int32(MSG_NOSIGNAL)
                    #else
                    let flags: Int32 = 0
                    #endif
                    let result = sendto(fd, payload.baseAddress, payload.count, flags, destination, addressLength)
                    if result < 0 && errno == EINTR { continue }
                    return result
                }
            }
        }
        return sent == bytes.count
    }

    /// `READY=1` (plus `STATUS=` when given): start-up or a reload has finished.
    @discardableResult
    public func ready(status: String? = nil) -> Bool { send(.ready(status: status)) }

    /// `STATUS=<text>`: shown by `systemctl status`.
    @discardableResult
    public func status(_ text: String) -> Bool { send(.status(text)) }

    /// `WATCHDOG=1`: the keep-alive ping. Call it from a timer on the event loop, so a stuck
    /// loop stops the pings and systemd restarts the service.
    @discardableResult
    public func watchdog() -> Bool { send(.watchdog) }

    /// `RELOADING=1` with `MONOTONIC_USEC=` set to `CLOCK_MONOTONIC` now. Send `ready()` when done.
    @discardableResult
    public func reloading() -> Bool { send(.reloading(monotonicMicroseconds: MonotonicClock.microseconds())) }

    /// `STOPPING=1`: shutdown has begun.
    @discardableResult
    public func stopping() -> Bool { send(.stopping) }

    /// Builds the `sockaddr_un` for a `NOTIFY_SOCKET` value: `/path` (NUL-terminated, length
    /// includes the NUL) or `@name` (abstract: leading NUL, no terminator). Nil for other forms,
    /// an empty name, or a name that does not fit `sun_path`.
    package static func socketAddress(for name: String) -> ([UInt8], socklen_t)? {
        var path = Array(name.utf8)
        guard let first = path.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else {
            return nil
        }
        let abstract = first == UInt8(ascii: "@")
        if abstract {
            guard path.count >= 2 else { return nil }
            path[0] = 0
        }
        guard !path.dropFirst().contains(0) else { return nil }
        var storage = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // A path needs room for its terminating NUL; an abstract name does not.
        guard path.count + (abstract ? 0 : 1) <= capacity else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { sunPath in
            sunPath.copyBytes(from: path)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = pathOffset + path.count + (abstract ? 0 : 1)
        let bytes = withUnsafeBytes(of: &storage) { Array($0) }
        return (bytes, socklen_t(length))
    }
}
