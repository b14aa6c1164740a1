/// File descriptors passed in by socket activation, as `sd_listen_fds_with_names(3)` sees them.
///
/// systemd (and `systemd-socket-activate`) hands a service its listening sockets as file
/// descriptors 3, 4, ... and describes them in three environment variables:
/// `LISTEN_PID` (the process they are meant for), `LISTEN_FDS` (how many) and, optionally,
/// `LISTEN_FDNAMES` (colon-separated names, one per descriptor). This type only interprets
/// those variables; it never touches a descriptor. Taking the descriptors (unsetting the
/// variables, setting `FD_CLOEXEC`) is `SocketActivation` in PageSyncServer.
public struct ListenFDs: Equatable, Sendable {
    /// The first passed descriptor, `SD_LISTEN_FDS_START`. Always 3.
    public static let firstFD: Int32 = 3

    /// The passed descriptors in order: `3, 4, ..., 3 + count - 1`. Never empty.
    public let fds: [Int32]

    /// One name per descriptor, from `LISTEN_FDNAMES`, or `nil` when that variable was not set.
    /// When present it has exactly as many elements as `fds` (a name may be empty).
    public let names: [String]?

    /// Number of descriptors passed (`LISTEN_FDS`), always >= 1.
    public var count: Int { fds.count }

    /// Pairs every descriptor with its name (`nil` when no names were passed).
    public var entries: [(fd: Int32, name: String?)] {
        fds.enumerated().map { index, fd in (fd: fd, name: names?[index]) }
    }

    /// Why a set of socket-activation variables was rejected.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// `LISTEN_PID` is not a decimal process id.
        case invalidPID(String)
        /// `LISTEN_FDS` is not a positive decimal count that fits after descriptor 3.
        case invalidCount(String)
        /// `LISTEN_FDNAMES` holds a different number of names than `LISTEN_FDS` says.
        case namesMismatch(names: Int, fds: Int)

        /// One line for a log message.
        public var description: String {
            switch self {
            case .invalidPID(let value): return "LISTEN_PID=\(value) is not a process id"
            case .invalidCount(let value): return "LISTEN_FDS=\(value) is not a positive descriptor count"
            case .namesMismatch(let names, let fds):
                return "LISTEN_FDNAMES has \(names) names but LISTEN_FDS=\(fds)"
            }
        }
    }

    /// Creates a value for `count` descriptors starting at 3.
    /// - Precondition: `count >= 1`, and `names` is nil or has `count` elements.
    public init(count: Int, names: [String]? = nil) {
        precondition(count >= 1, "ListenFDs needs at least one descriptor")
        precondition(names == nil || names!.count == count, "one name per descriptor")
        self.fds = (0..<count).map { ListenFDs.firstFD + Int32($0) }
        self.names = names
    }

    /// Interprets the socket-activation variables with `sd_listen_fds` semantics.
    ///
    /// - Returns: `.success(nil)` when the variables are absent or meant for another process
    ///   (`LISTEN_PID` unset or not equal to `pid`, or `LISTEN_FDS` unset): bind as configured.
    ///   `.success(fds)` when they are for us. `.failure` when they are for us (or unreadable) but
    ///   malformed: `LISTEN_PID` or `LISTEN_FDS` not decimal, a count of 0 or below (systemd's
    ///   `-EINVAL`), or a name count that differs from the descriptor count.
    public static func check(environment: [String: String], pid: Int32) -> Result<ListenFDs?, Problem> {
        guard let pidText = environment["LISTEN_PID"] else { return .success(nil) }
        guard let listenPID = SystemdParsing.decimal(pidText), listenPID >= 1, listenPID <= Int(Int32.max) else {
            return .failure(.invalidPID(pidText))
        }
        guard listenPID == Int(pid) else { return .success(nil) }
        guard let countText = environment["LISTEN_FDS"] else { return .success(nil) }
        guard let count = SystemdParsing.decimal(countText), count >= 1,
              count <= Int(Int32.max) - Int(firstFD) else {
            return .failure(.invalidCount(countText))
        }
        var names: [String]? = nil
        if let namesText = environment["LISTEN_FDNAMES"] {
            let split = namesText.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard split.count == count else {
                return .failure(.namesMismatch(names: split.count, fds: count))
            }
            names = split
        }
        return .success(ListenFDs(count: count, names: names))
    }

    /// Like ``check(environment:pid:)``, folding every "no" into `nil`: returns the descriptors
    /// only when the variables are present, meant for `pid` and well-formed.
    public static func parse(environment: [String: String], pid: Int32) -> ListenFDs? {
        switch check(environment: environment, pid: pid) {
        case .success(let fds): return fds
        case .failure: return nil
        }
    }
}
