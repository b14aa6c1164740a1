/// A section of the `INFO` reply (PROTOCOL.md, "INFO"), in the order the reply lists them.
public enum InfoSection: String, Equatable, Sendable, CaseIterable {
    /// Version, process, uptime, listening addresses.
    case server
    /// Connected clients by transport, limits, refusals.
    case clients
    /// Rooms, their members and state.
    case rooms
    /// The state engine: kind, durability, groups, syncs, Redis.
    case engine
    /// Counters: commands, errors, page changes, deliveries, bytes, AUTH, TLS.
    case stats

    /// The section's heading line in the reply: `# Server`.
    public var heading: String { "# " + rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
