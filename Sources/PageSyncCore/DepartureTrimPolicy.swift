/// When to hand freed heap memory back to the system after clients leave.
///
/// malloc keeps what a burst of clients freed: after 50 clients that pulled a 1 MiB page each
/// without reading (their replies queued in the daemon) went away, the daemon stayed 35 MiB
/// above where it started, and `malloc_trim` brought it back within 0.3 MiB; 60 clients that
/// left a 900 KB `TEXT` reply queued kept it 57 MB above its start for good (both measured
/// for `8caac11`, which added this policy). ``HeapTrimPolicy`` covers bursts of TLS
/// handshakes; this covers departures.
///
/// The daemon reports its resident bytes and client count now and then (every 2 s). A trim is
/// due when all three hold:
/// - the resident bytes grew by at least ``minimumGrowthBytes`` over what the last trim left
///   (or the first report), so there may be something to give back;
/// - the clients are at most half the most connected since then, so memory was freed rather than
///   taken by clients still here (a busy daemon is never trimmed for nothing);
/// - at least ``minimumIntervalMilliseconds`` passed since the last trim (a trim walks the heap).
///
/// Pure value: the caller reports, trims when told, then reports what the trim left.
public struct DepartureTrimPolicy: Sendable, Equatable {
    /// Growth in resident bytes below this is not worth a trim.
    public var minimumGrowthBytes: Int
    /// Trims are at least this far apart.
    public var minimumIntervalMilliseconds: UInt64
    /// Resident bytes the last trim left (or the first report, or the lowest since).
    public private(set) var baselineBytes: Int?
    /// The most clients seen since the last trim.
    public private(set) var peakClients = 0
    private var lastTrimMilliseconds: UInt64?

    /// A policy trimming after `minimumGrowthBytes` of growth (default 16 MiB), at most once
    /// every `minimumIntervalMilliseconds` (default 10 s).
    public init(minimumGrowthBytes: Int = 16 << 20, minimumIntervalMilliseconds: UInt64 = 10_000) {
        self.minimumGrowthBytes = minimumGrowthBytes
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
    }

    /// The resident bytes before any client connected: the first baseline. (Without it, the
    /// first report is the baseline, and clients that came before it would never count.)
    public mutating func begin(resident: Int) {
        baselineBytes = resident
        peakClients = 0
    }

    /// A client connected and `clients` are connected now. Told at once, not at the next
    /// report: a burst that comes and goes between two reports still counts.
    public mutating func clientConnected(clients: Int) {
        peakClients = max(peakClients, clients)
    }

    /// A report: `resident` bytes and `clients` connected at monotonic time `now` (ms). True
    /// when the caller should trim now, which this records; then call ``trimmed(resident:clients:)``.
    public mutating func shouldTrim(resident: Int, clients: Int, now: UInt64) -> Bool {
        guard let baseline = baselineBytes, resident >= baseline else {
            baselineBytes = resident
            peakClients = max(peakClients, clients)
            return false
        }
        peakClients = max(peakClients, clients)
        guard resident - baseline >= minimumGrowthBytes, clients * 2 <= peakClients else { return false }
        if let last = lastTrimMilliseconds, now < last || now - last < minimumIntervalMilliseconds {
            return false
        }
        lastTrimMilliseconds = now
        return true
    }

    /// The trim left `resident` bytes with `clients` connected: the new baseline.
    public mutating func trimmed(resident: Int, clients: Int) {
        baselineBytes = resident
        peakClients = clients
    }
}
