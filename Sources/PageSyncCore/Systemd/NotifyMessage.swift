/// One `sd_notify(3)` datagram: newline-separated `KEY=VALUE` assignments.
///
/// The text is what the service manager parses; see `sd_notify(3)` for the meaning of each key.
/// Formatting is pure; sending is `SystemdNotifier` in PageSyncServer.
public enum NotifyMessage: Equatable, Sendable {
    /// `READY=1`: start-up (or a reload) finished; optionally with a `STATUS=` line.
    case ready(status: String?)
    /// `STATUS=<text>`: a one-line, human-readable status shown by `systemctl status`.
    case status(String)
    /// `WATCHDOG=1`: the keep-alive ping; must come more often than `WATCHDOG_USEC`.
    case watchdog
    /// `RELOADING=1` plus `MONOTONIC_USEC=<CLOCK_MONOTONIC in µs>` (required by
    /// `Type=notify-reload`, harmless for `Type=notify`): a reload has begun.
    /// Follow it with `.ready` when the reload is done.
    case reloading(monotonicMicroseconds: UInt64)
    /// `STOPPING=1`: shutdown has begun.
    case stopping

    /// The datagram's text. Never ends with a newline; assignments are separated by "\n".
    /// Status text is sanitized so it cannot inject further assignments (see ``sanitizedStatus(_:)``).
    public var text: String {
        switch self {
        case .ready(let status):
            if let status { return "READY=1\nSTATUS=\(Self.sanitizedStatus(status))" }
            return "READY=1"
        case .status(let status):
            return "STATUS=\(Self.sanitizedStatus(status))"
        case .watchdog:
            return "WATCHDOG=1"
        case .reloading(let usec):
            return "RELOADING=1\nMONOTONIC_USEC=\(usec)"
        case .stopping:
            return "STOPPING=1"
        }
    }

    /// The datagram's bytes (UTF-8 of ``text``).
    public var bytes: [UInt8] { Array(text.utf8) }

    /// Replaces every control character (including CR, LF and NUL) with a space, so the status
    /// stays one assignment, and trims the result to at most 512 UTF-8 bytes (on a character
    /// boundary) to keep the datagram small.
    public static func sanitizedStatus(_ status: String) -> String {
        var out = ""
        var byteCount = 0
        for character in status {
            let piece: String
            if character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                piece = " "
            } else {
                piece = String(character)
            }
            byteCount += piece.utf8.count
            if byteCount > 512 { break }
            out += piece
        }
        return out
    }
}

extension NotifyMessage {
    /// The daemon's conventional status text, e.g. `"3 rooms, 1 client"`.
    public static func statusText(rooms: Int, clients: Int) -> String {
        "\(rooms) \(rooms == 1 ? "room" : "rooms"), \(clients) \(clients == 1 ? "client" : "clients")"
    }
}
