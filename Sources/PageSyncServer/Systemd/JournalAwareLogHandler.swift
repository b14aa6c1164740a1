#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import PageSyncCore

extension JournalPriority {
    /// The syslog priority for a swift-log level: trace/debug 7, info 6, notice 5, warning 4,
    /// error 3, critical 2.
    public init(_ level: Logger.Level) {
        // Every Logger.Level raw value is mapped; the fallback only guards future levels.
        self = JournalPriority(logLevelName: level.rawValue) ?? .info
    }
}

/// A swift-log handler that writes one line per event to stderr, and speaks the journal's
/// language when stderr is the journal.
///
/// - Journal mode (stderr is the stream named by `JOURNAL_STREAM`): every line starts with the
///   syslog priority, `<6>label: message key=value`, and has no timestamp (the journal adds
///   one). `journalctl -p err` then filters by level. A message spanning several lines gets the
///   prefix on every line, so no line falls back to the default priority.
/// - Human mode (otherwise): `2026-01-31T12:00:00.123Z info label: message key=value`
///   (UTC timestamp with milliseconds).
///
/// Metadata is the handler's, then the metadata provider's, then the event's (later wins),
/// printed as `key=value` sorted by key; values with blanks, quotes or `=` are quoted.
/// Each line is written with a single `write(2)`, so concurrent lines do not interleave.
public struct JournalAwareLogHandler: LogHandler {
    /// Where finished lines (with their trailing newline) go.
    public typealias Output = @Sendable (String) -> Void

    /// The logger label, printed before the message.
    public let label: String
    /// True when lines carry `<N>` priority prefixes instead of timestamps.
    public let journalMode: Bool
    private let output: Output

    /// Handler metadata (value semantics, per swift-log's rules).
    public var metadata: Logger.Metadata = [:]
    /// The minimum level logged.
    public var logLevel: Logger.Level = .info
    /// Contextual metadata added to every event.
    public var metadataProvider: Logger.MetadataProvider?

    /// Creates a handler.
    /// - Parameters:
    ///   - label: the logger label.
    ///   - journalMode: force journal or human mode; nil (default) decides with
    ///     ``standardErrorIsJournal(environment:)``.
    ///   - metadataProvider: contextual metadata for every event.
    ///   - output: where lines go; stderr by default.
    public init(
        label: String,
        journalMode: Bool? = nil,
        metadataProvider: Logger.MetadataProvider? = nil,
        output: @escaping Output = JournalAwareLogHandler.writeToStandardError
    ) {
        self.label = label
        self.journalMode = journalMode ?? Self.standardErrorIsJournal()
        self.metadataProvider = metadataProvider
        self.output = output
    }

    /// For `LoggingSystem.bootstrap`: `LoggingSystem.bootstrap { JournalAwareLogHandler.standard(label: $0) }`.
    /// Decides journal mode once per call; cheap enough for per-logger use.
    public static func standard(label: String) -> JournalAwareLogHandler {
        JournalAwareLogHandler(label: label)
    }

    /// Gets or sets one handler metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Formats the event and hands the line to the output.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let eventMetadata = event.metadata {
            merged.merge(eventMetadata) { _, new in new }
        }
        output(format(level: event.level, message: event.message.description, metadata: merged,
                      timestamp: journalMode ? "" : Self.timestamp()))
    }

    /// The line for one event, newline-terminated. `timestamp` is used in human mode only.
    public func format(level: Logger.Level, message: String, metadata: Logger.Metadata, timestamp: String) -> String {
        var body = "\(label): \(message)"
        let fields = Self.formatMetadata(metadata)
        if !fields.isEmpty { body += " " + fields }
        if journalMode {
            let prefix = JournalPriority(level).prefix
            var line = ""
            for part in body.split(separator: "\n", omittingEmptySubsequences: false) {
                line += prefix + part + "\n"
            }
            return line
        }
        return "\(timestamp) \(level.rawValue) \(body)\n"
    }

    /// `key=value` pairs sorted by key, separated by spaces.
    public static func formatMetadata(_ metadata: Logger.Metadata) -> String {
        metadata.keys.sorted().map { key in "\(key)=\(quoteIfNeeded(metadata[key]!.description))" }
            .joined(separator: " ")
    }

    static func quoteIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\t" || $0 == "\"" || $0 == "=" || $0 == "\n" }
        guard needsQuotes else { return value }
        var quoted = "\""
        for character in value {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            default: quoted.append(character)
            }
        }
        return quoted + "\""
    }

    /// True when `JOURNAL_STREAM` is set and names the stream stderr is connected to
    /// (same `st_dev` and `st_ino`), as `systemd.exec(5)` recommends checking.
    public static func standardErrorIsJournal(environment: [String: String] = SystemdEnvironment.current()) -> Bool {
        guard let value = environment["JOURNAL_STREAM"], let stream = JournalStream(parsing: value) else {
            return false
        }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return stream.matches(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Writes the whole line to stderr (retrying partial writes and EINTR).
    public static let writeToStandardError: Output = { line in
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let millis = Int32(now.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }
}
