/// Reconnection delays: about 100 ms, doubling up to 5 s, with jitter.
public enum ReconnectBackoff {
    /// The first delay, in milliseconds.
    public static let initialMilliseconds = 100
    /// The longest delay, in milliseconds.
    public static let maximumMilliseconds = 5_000

    /// The delay before reconnection attempt `attempt` (1 for the first): a value in
    /// `base/2 ... base`, where `base` is 100 ms doubled per attempt and capped at 5 s;
    /// `unitRandom` in `0..<1` picks where in that range.
    public static func delay(attempt: Int, unitRandom: Double) -> Int {
        let exponent = min(max(0, attempt - 1), 16)
        let base = min(maximumMilliseconds, initialMilliseconds << exponent)
        let r = min(max(0, unitRandom), 1)
        return base / 2 + Int(Double(base - base / 2) * r)
    }
}
