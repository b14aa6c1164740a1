/// Everything `INFO` and `/metrics` report, read at one moment on the loop thread: the server's
/// counters (``ServerMetrics``, ``EngineStatistics``) and what it holds now (clients, rooms).
/// One value for both, so the two never disagree; a scrape or an `INFO` builds it once.
public struct ServerReport: Equatable, Sendable {
    /// One room as reported: its state, members and the changes made to it here.
    public struct Room: Equatable, Sendable {
        /// The room's name.
        public var name: String
        /// The room's state.
        public var state: RoomState
        /// Members connected to this daemon.
        public var members: Int
        /// Navigations that moved the room, made by this daemon's clients.
        public var changes: UInt64

        /// A room holding exactly these values.
        public init(name: String, state: RoomState, members: Int, changes: UInt64) {
            self.name = name
            self.state = state
            self.members = members
            self.changes = changes
        }
    }

    /// What the HTTP listener of `/metrics` did (zeros when it is off).
    public struct Listener: Equatable, Sendable {
        /// Requests answered.
        public var requests: UInt64 = 0
        /// Requests answered `400` or `431`.
        public var badRequests: UInt64 = 0
        /// Connections refused (too many open).
        public var refused: UInt64 = 0
        /// Connections closed by a time limit.
        public var timeouts: UInt64 = 0

        /// Zeros.
        public init() {}
    }

    /// `PageSyncVersion.current`.
    public var version = PageSyncVersion.current
    /// The process id.
    public var processID: Int = 0
    /// Seconds since start (monotonic clock).
    public var uptimeSeconds: Double = 0
    /// When the daemon started, in seconds since 1970 (wall clock).
    public var startTimeSeconds: Double = 0
    /// The process's resident memory, in bytes (nil where unknown).
    public var residentBytes: Int?
    /// CPU time the process used, user and system, in seconds.
    public var cpuSeconds: Double = 0
    /// The plaintext listener's address as bound (`127.0.0.1:7777`), or nil.
    public var listen: String?
    /// The TLS listener's address, or nil.
    public var tlsListen: String?
    /// The metrics listener's address, or nil.
    public var metricsListen: String?
    /// Clients connected now over plaintext TCP.
    public var clientsTCP = 0
    /// Clients connected now over TLS.
    public var clientsTLS = 0
    /// Clients served at most (`max-clients`, or fewer under the open-file limit).
    public var maxClients = 0
    /// Clients whose output waits in the daemon now (they read slower than their room changes;
    /// their `PAGE` events are conflated).
    public var clientsBackedUp = 0
    /// TLS connections whose handshake is under way.
    public var tlsHandshaking = 0
    /// Every room's count, listed or not.
    public var roomCount = 0
    /// The first rooms, in configuration order, up to the per-room limit (`metrics-rooms`).
    public var rooms: [Room] = []
    /// The counters of the daemon.
    public var metrics = ServerMetrics()
    /// Bytes received and sent, by every connection since start.
    public var bytesIn: UInt64 = 0
    /// See ``bytesIn``.
    public var bytesOut: UInt64 = 0
    /// `PAGE` events replaced by newer ones before they were sent (slow readers), since start.
    public var conflated: UInt64 = 0
    /// Times a WebSocket member's commands waited for the web's command rate, since start.
    public var webRateWaits: UInt64 = 0
    /// `PAGE` events the fan-out addressed to members (one per member and new state), since start.
    public var deliveries: UInt64 = 0
    /// Groups that could not be saved (their changes undone, `ERR 507` or `ERR 503`), since start.
    public var groupsFailed: UInt64 = 0
    /// Groups handed to the engine and not settled yet.
    public var groupsPending = 0
    /// Nil while the engine accepts changes; else why not.
    public var refusal: String?
    /// The engine's own counters.
    public var engine = EngineStatistics(kind: .journal)
    /// The metrics listener's counters.
    public var listener = Listener()
    /// How long the last `/metrics` rendering took on the loop (report and text), in
    /// nanoseconds; nil before the first.
    public var lastRenderNanoseconds: UInt64?
    /// Whether the daemon is stopping.
    public var stopping = false

    /// An empty report (what the fields default to).
    public init() {}

    /// Clients connected now.
    public var clients: Int { clientsTCP + clientsTLS }
}
