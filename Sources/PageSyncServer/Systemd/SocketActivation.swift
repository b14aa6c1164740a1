#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PageSyncCore

/// Socket activation: takes the listening sockets systemd (or `systemd-socket-activate`)
/// passed in, with `sd_listen_fds(1)` semantics. Adopt each returned descriptor with
/// `TCPListener(loop:adopting:)`; when none are returned, bind as configured.
public enum SocketActivation {
    /// Why the passed descriptors could not be used.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The variables were for us but malformed.
        case invalidEnvironment(ListenFDs.Problem)
        /// A passed descriptor is not open (`fcntl` failed with this errno).
        case badDescriptor(fd: Int32, errno: Int32)

        /// One line for a log message.
        public var description: String {
            switch self {
            case .invalidEnvironment(let problem): return "socket activation: \(problem)"
            case .badDescriptor(let fd, let code):
                return "socket activation: descriptor \(fd) is unusable (\(String(cString: strerror(code))))"
            }
        }
    }

    /// Takes the passed descriptors from the process environment: reads `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES`, always unsets all three (so children never see them),
    /// and sets `FD_CLOEXEC` on each descriptor.
    ///
    /// - Returns: `(fd, name)` pairs in order (fd 3 first; `name` nil when `LISTEN_FDNAMES` was
    ///   not set), or an empty array when not socket-activated or when the variables are malformed
    ///   (use ``take(environment:pid:unsetEnvironment:)`` to learn why).
    public static func takeListenFDs() -> [(fd: Int32, name: String?)] {
        switch take() {
        case .success(let fds): return fds
        case .failure: return []
        }
    }

    /// The checked form of ``takeListenFDs()``.
    ///
    /// - Parameters:
    ///   - environment: the variables to read; the process environment by default.
    ///   - pid: the process the descriptors must be meant for; `getpid()` by default.
    ///   - unsetEnvironment: unset the three variables in the process environment (always,
    ///     whatever the outcome, as `sd_listen_fds(1)` does).
    /// - Returns: the descriptors (empty when not activated), or why they cannot be used.
    public static func take(
        environment: [String: String] = SystemdEnvironment.current(),
        pid: Int32 = getpid(),
        unsetEnvironment: Bool = true
    ) -> Result<[(fd: Int32, name: String?)], Failure> {
        defer {
            if unsetEnvironment {
                unsetenv("LISTEN_PID")
                unsetenv("LISTEN_FDS")
                unsetenv("LISTEN_FDNAMES")
            }
        }
        switch ListenFDs.check(environment: environment, pid: pid) {
        case .failure(let problem):
            return .failure(.invalidEnvironment(problem))
        case .success(nil):
            return .success([])
        case .success(let fds?):
            // Check every descriptor before changing any, so a failure leaves all untouched.
            var flags: [Int32] = []
            for fd in fds.fds {
                let current = fcntl(fd, F_GETFD)
                guard current >= 0 else { return .failure(.badDescriptor(fd: fd, errno: errno)) }
                flags.append(current)
            }
            for (fd, current) in zip(fds.fds, flags) where current & FD_CLOEXEC == 0 {
                guard fcntl(fd, F_SETFD, current | FD_CLOEXEC) == 0 else {
                    return .failure(.badDescriptor(fd: fd, errno: errno))
                }
            }
            return .success(fds.entries)
        }
    }

    /// True when `fd` is a listening stream socket (`SO_TYPE == SOCK_STREAM` and
    /// `SO_ACCEPTCONN`), i.e. something `uv_tcp_open`/`uv_pipe_open` plus `uv_listen` can serve.
    public static func isListeningStreamSocket(_ fd: Int32) -> Bool {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return false }
        #if canImport(Glibc)
        guard type == Int32(SOCK_STREAM.rawValue) else { return false }
        #else
        guard type == SOCK_STREAM else { return false }
        #endif
        var accepting: Int32 = 0
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 else { return false }
        return accepting != 0
    }

    /// The address family of a socket descriptor (`AF_INET`, `AF_INET6`, `AF_UNIX`), or nil when
    /// `fd` is not a socket. Lets the daemon choose `uv_tcp_open` vs `uv_pipe_open`.
    public static func addressFamily(of fd: Int32) -> Int32? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return Int32(storage.ss_family)
    }
}
