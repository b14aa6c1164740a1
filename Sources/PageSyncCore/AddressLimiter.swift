/// Counts open connections per source address, so one address cannot take every slot
/// (`max-clients-per-address`).
///
/// Pure: the owner says which connections are still open through `isOpen`, so a
/// connection closed on any path is noticed without a callback; the table heals itself
/// when an address reaches its limit, and ``sweep(isOpen:)`` drops addresses whose
/// connections are all gone.
public struct AddressLimiter: Sendable {
    /// The most open connections one address may hold; at least 1.
    public var limit: Int
    private var open: [String: Set<Int>] = [:]
    private var admittedSinceSweep = 0

    /// Creates a limiter allowing `limit` connections per address.
    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Addresses in the table (for tests).
    public var trackedAddressCount: Int { open.count }

    /// Admits `connection` from `address` unless that address already holds `limit` open
    /// connections. Returns whether it was admitted (and is now counted).
    public mutating func admit(address: String, connection: Int, isOpen: (Int) -> Bool) -> Bool {
        // The set is changed in place: a copy taken out of the table and put back would copy
        // every id on each insertion (the table still holds the original), which made each
        // accept cost as much as the address's open connections.
        if let ids = open[address], ids.count >= limit {
            let live = ids.filter(isOpen)
            open[address] = live
            guard live.count < limit else { return false }
        }
        open[address, default: []].insert(connection)
        admittedSinceSweep += 1
        if admittedSinceSweep >= 4096 { sweep(isOpen: isOpen) }
        return true
    }

    /// Open connections counted for `address` (closed ones may still be counted until the
    /// next sweep or the next admission at the limit).
    public func count(address: String) -> Int { open[address]?.count ?? 0 }

    /// Forgets closed connections, and addresses left with none.
    public mutating func sweep(isOpen: (Int) -> Bool) {
        admittedSinceSweep = 0
        var kept: [String: Set<Int>] = [:]
        for (address, ids) in open {
            let live = ids.filter(isOpen)
            if !live.isEmpty { kept[address] = live }
        }
        open = kept
    }
}
