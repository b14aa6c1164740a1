/// How many clients the open-file limit leaves room for.
///
/// Every client holds one descriptor. The daemon keeps ``reserved`` more for its own files
/// (listeners, the journal and its rewrite, libuv's and the Redis connection's descriptors;
/// Redis keeps 32 the same way, `CONFIG_MIN_RESERVED_FDS`), and ``perRoom`` for each room's
/// document (open while served, and a second while it is re-read). Without
/// this, connections past the limit were accepted by the kernel and then dropped by libuv
/// (`EMFILE`) with no reply and no log line; capped, they get `ERR 503 server full`.
public enum OpenFileBudget {
    /// Descriptors kept for the daemon's own files.
    public static let reserved = 32
    /// Descriptors kept for each room's document.
    public static let perRoom = 2

    /// The clients to admit, and a warning line when that is fewer than configured.
    public struct Fit: Equatable, Sendable {
        public var maxClients: Int
        public var warning: String?

        public init(maxClients: Int, warning: String?) {
            self.maxClients = maxClients
            self.warning = warning
        }
    }

    /// `configured` clients, or fewer when `openFileLimit` (the soft `RLIMIT_NOFILE`; nil when
    /// unlimited) cannot hold them and the reserve for the daemon, its `rooms` and `extra`
    /// descriptors more (the metrics listener and its connections); at least 1.
    public static func fit(maxClients configured: Int, openFileLimit: Int?, rooms: Int, extra: Int = 0) -> Fit {
        let kept = reserved + perRoom * rooms + extra
        guard let limit = openFileLimit, limit - kept < configured else {
            return Fit(maxClients: configured, warning: nil)
        }
        let fitting = max(1, limit - kept)
        return Fit(
            maxClients: fitting,
            warning: "max-clients \(configured) needs \(configured + kept) open files, but the limit is \(limit): "
                + "serving at most \(fitting) client(s) (raise LimitNOFILE= or ulimit -n)")
    }
}
