/// The daemon's counters and histograms: plain integers owned by the loop thread, changed where
/// things happen (a few additions per command, nothing allocated, no lock) and read when `INFO`
/// is asked or `/metrics` scraped. Counters only grow, from 0 at start.
public struct ServerMetrics: Equatable, Sendable {
    /// Commands handled, by verb (indexed by ``CommandVerb/rawValue``).
    public private(set) var commands: [UInt64] = Array(repeating: 0, count: CommandVerb.allCases.count)
    /// `ERR` replies sent, by code (indexed like ``ErrorCode/allCases``).
    public private(set) var errors: [UInt64] = Array(repeating: 0, count: ErrorCode.allCases.count)
    /// Navigations that moved a room (each turns the page once, for everyone in the room).
    public var pageChanges: UInt64 = 0
    /// Connections admitted, by transport.
    public var connectionsTCP: UInt64 = 0
    /// See ``connectionsTCP``.
    public var connectionsTLS: UInt64 = 0
    /// Connections refused with `ERR 503 server full`.
    public var refusedFull: UInt64 = 0
    /// Connections refused with `ERR 503 too many connections from your address`.
    public var refusedPerAddress: UInt64 = 0
    /// Connections closed with `BYE idle for <n> s`.
    public var closedIdle: UInt64 = 0
    /// TLS connections closed because no handshake completed in time.
    public var closedHandshakeTimeout: UInt64 = 0
    /// Wrong or refused `AUTH` tokens.
    public var authFailures: UInt64 = 0
    /// TLS handshakes completed.
    public var tlsHandshakes: UInt64 = 0
    /// TLS handshakes that failed.
    public var tlsHandshakeFailures: UInt64 = 0
    /// Bytes received and sent by connections already closed (open ones are added when read).
    public var closedBytesIn: UInt64 = 0
    /// See ``closedBytesIn``.
    public var closedBytesOut: UInt64 = 0
    /// Events replaced before they were sent by connections already closed.
    public var closedConflated: UInt64 = 0
    /// Changes answered `ERR 507` (their group failed after they were made), of connections
    /// already closed.
    public var closedFailedChanges: UInt64 = 0
    /// Groups of changes handed to the state engine.
    public var groups: UInt64 = 0
    /// Time to handle one command on the loop (parse, decide, stage its reply), in nanoseconds.
    public var commandDuration = FixedHistogram.seconds()
    /// Rooms changed per group.
    public var groupSize = FixedHistogram.sizes()
    /// From a group's settling to the last write of the fan-out that followed, in nanoseconds.
    public var fanoutDuration = FixedHistogram.seconds()
    /// When the earliest group settled whose fan-out is not measured yet (monotonic nanoseconds).
    public private(set) var settledAt: UInt64?

    /// Nothing counted yet.
    public init() {}

    /// Counts one command.
    @inline(__always)
    public mutating func count(_ verb: CommandVerb) {
        commands[verb.rawValue] &+= 1
    }

    /// Counts `times` `ERR` replies of `code`.
    public mutating func count(error code: ErrorCode, times: UInt64 = 1) {
        errors[Self.errorIndex(code)] &+= times
    }

    /// A group of `rooms` changed rooms went to the state engine.
    @inline(__always)
    public mutating func groupSubmitted(rooms: Int) {
        groups &+= 1
        groupSize.observe(UInt64(rooms))
    }

    /// A group settled at `now`: the fan-out that follows is timed from here.
    @inline(__always)
    public mutating func settled(now: UInt64) {
        if settledAt == nil { settledAt = now }
    }

    /// The fan-out after a settle wrote its last line at `now`.
    public mutating func fannedOut(now: UInt64) {
        guard let start = settledAt else { return }
        fanoutDuration.observe(now &- start)
        settledAt = nil
    }

    /// Counts the reply `line` if it is an `ERR` line (`ERR <3 digits> ...`): every error reply
    /// is counted where it is queued, whichever command made it.
    @inline(__always)
    public mutating func countIfError(_ line: [UInt8]) {
        guard line.count >= 7, line[0] == 0x45, line[1] == 0x52, line[2] == 0x52, line[3] == 0x20 else { return }
        let code = Int(line[4] &- 0x30) * 100 + Int(line[5] &- 0x30) * 10 + Int(line[6] &- 0x30)
        if let known = ErrorCode(rawValue: code) { count(error: known) }
    }

    /// How many commands of `verb` were handled.
    public func commands(_ verb: CommandVerb) -> UInt64 { commands[verb.rawValue] }

    /// How many `ERR` replies of `code` were sent.
    public func errors(_ code: ErrorCode) -> UInt64 { errors[Self.errorIndex(code)] }

    private static func errorIndex(_ code: ErrorCode) -> Int {
        ErrorCode.allCases.firstIndex(of: code)!
    }
}
