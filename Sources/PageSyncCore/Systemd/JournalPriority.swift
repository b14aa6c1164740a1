/// syslog priorities as the journal reads them from a service's stdout/stderr:
/// a line that begins with `<N>` (N = 0...7) is logged at priority N (`sd-daemon(3)`),
/// so `journalctl -p err` can filter it.
public enum JournalPriority: Int, Comparable, Sendable, CaseIterable {
    /// 0, `SD_EMERG`: the system is unusable.
    case emergency = 0
    /// 1, `SD_ALERT`: act immediately.
    case alert = 1
    /// 2, `SD_CRIT`: critical.
    case critical = 2
    /// 3, `SD_ERR`: error.
    case error = 3
    /// 4, `SD_WARNING`: warning.
    case warning = 4
    /// 5, `SD_NOTICE`: normal but significant.
    case notice = 5
    /// 6, `SD_INFO`: informational.
    case info = 6
    /// 7, `SD_DEBUG`: debug.
    case debug = 7

    /// The line prefix, e.g. `"<3>"` for `.error`.
    public var prefix: String { "<\(rawValue)>" }

    /// Maps a swift-log level, given by its raw value (`Logger.Level.rawValue`: "trace",
    /// "debug", "info", "notice", "warning", "error", "critical"), to a priority:
    /// trace and debug -> 7, info -> 6, notice -> 5, warning -> 4, error -> 3, critical -> 2.
    /// Returns nil for any other string. (PageSyncCore does not depend on swift-log; the
    /// server adds an initializer taking `Logger.Level` directly.)
    public init?(logLevelName: String) {
        switch logLevelName {
        case "trace", "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning": self = .warning
        case "error": self = .error
        case "critical": self = .critical
        default: return nil
        }
    }

    /// Orders by severity as numbers: a lower number is more severe (`.emergency < .debug`).
    public static func < (lhs: JournalPriority, rhs: JournalPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
