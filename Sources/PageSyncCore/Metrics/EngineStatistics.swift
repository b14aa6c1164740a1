/// What a state engine counts about itself, on the loop thread, for `INFO` and `/metrics`.
public struct EngineStatistics: Equatable, Sendable {
    /// Which engine.
    public enum Kind: String, Equatable, Sendable {
        /// The journal in the state directory.
        case journal
        /// Redis, shared with other daemons.
        case redis
    }

    /// Which engine this is.
    public var kind: Kind
    /// When a change counts as saved (the journal's mode); nil for Redis.
    public var durability: Durability?
    /// Journal: `fdatasync` calls completed (failed ones included).
    public var syncs: UInt64 = 0
    /// Journal: syncs that failed.
    public var syncFailures: UInt64 = 0
    /// Journal: how long each sync took, from the loop's request to its answer, in nanoseconds.
    public var syncDuration = FixedHistogram.seconds()
    /// Journal: how long the last sync took, in nanoseconds; nil before the first.
    public var lastSyncNanoseconds: UInt64?
    /// Journal: bytes of records in the file now.
    public var journalBytes: UInt64 = 0
    /// Journal: compactions completed.
    public var compactions: UInt64 = 0
    /// Redis: whether both of its connections are up now.
    public var redisUp = false
    /// Redis: times the connection came back after it was lost.
    public var redisReconnects: UInt64 = 0

    /// Nothing counted yet, for an engine of `kind`.
    public init(kind: Kind, durability: Durability? = nil) {
        self.kind = kind
        self.durability = durability
    }

    /// A sync that took `nanoseconds` finished; `failed` when it did not save.
    public mutating func synced(took nanoseconds: UInt64, failed: Bool) {
        syncs &+= 1
        if failed { syncFailures &+= 1 }
        syncDuration.observe(nanoseconds)
        lastSyncNanoseconds = nanoseconds
    }
}
