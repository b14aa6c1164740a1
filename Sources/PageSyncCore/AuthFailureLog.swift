/// Turns a stream of failed `AUTH` attempts into few log lines: a flood costs about one
/// line per address per minute, however many attempts it makes.
///
/// Pure: the caller passes the time (monotonic milliseconds) and writes the lines.
///
/// The first wrong token from an address that has no open window is logged at once and
/// opens a window of ``windowMilliseconds``. Further attempts in the window (wrong or
/// refused) are only counted. When the window ends, ``flush(now:)`` returns one summary
/// line if anything was counted, and opens the next window silently; a window that ends
/// with nothing counted is closed without a line.
public struct AuthFailureLog: Sendable {
    private struct Window: Sendable {
        var start: UInt64
        var wrong = 0
        var refused = 0
        var rooms: [String] = []
    }

    /// How long one window lasts. Default one minute.
    public let windowMilliseconds: UInt64
    private var windows: [String: Window] = [:]

    /// Creates an empty log aggregator.
    public init(windowMilliseconds: UInt64 = 60_000) {
        self.windowMilliseconds = max(1, windowMilliseconds)
    }

    /// True when no window is open (nothing will be flushed).
    public var isEmpty: Bool { windows.isEmpty }

    /// Records a wrong token (`refused` false) or an attempt refused while the address was
    /// locked (`refused` true) from `address` for `room`. Returns a line to log now, or nil.
    public mutating func record(address: String, room: String, refused: Bool, now: UInt64) -> String? {
        guard var window = windows[address] else {
            windows[address] = Window(start: now)
            return refused
                ? "AUTH attempt refused for room \(room) from \(address): too many wrong tokens; further ones are summed up once a minute"
                : "wrong token for room \(room) from \(address); further failures from it are summed up once a minute"
        }
        if refused { window.refused += 1 } else { window.wrong += 1 }
        if !window.rooms.contains(room) && window.rooms.count < 8 { window.rooms.append(room) }
        windows[address] = window
        return nil
    }

    /// Summary lines for the windows that ended by `now`, in address order.
    public mutating func flush(now: UInt64) -> [String] {
        var lines: [String] = []
        for address in windows.keys.sorted() {
            guard let window = windows[address], now >= window.start, now - window.start >= windowMilliseconds else { continue }
            if window.wrong == 0 && window.refused == 0 {
                windows[address] = nil
                continue
            }
            let seconds = (now - window.start) / 1000
            lines.append("\(window.wrong) more wrong token(s) and \(window.refused) refused AUTH attempt(s) from \(address) in the last \(seconds) s (room(s): \(window.rooms.joined(separator: ", ")))")
            windows[address] = Window(start: now)
        }
        return lines
    }
}
