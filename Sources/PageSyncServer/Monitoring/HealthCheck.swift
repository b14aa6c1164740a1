import PageSyncCore

/// `GET /healthz`: whether the daemon serves changes now, decided from its state alone. An
/// answer at all means the loop turns (the listener runs on it); `503` says why changes are
/// not taken.
package enum HealthCheck {
    /// `(200, "ok")`, or `503` and the reason: the daemon is stopping, or its engine refuses
    /// changes (the journal's disk failing, Redis unreachable).
    package static func status(stopping: Bool, refusal: String?) -> (status: Int, text: String) {
        if stopping { return (503, "stopping") }
        if let refusal { return (503, "changes refused: \(refusal)") }
        return (200, "ok")
    }
}
