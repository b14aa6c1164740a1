import PageSyncCore
import UV

/// What `AUTH` needs beside the room's token: the rate limits per address and connection, the
/// token comparison (a random key per process), the log that summarises failures once a second,
/// and the timer that flushes it while any window is open. Loop thread only.
struct AuthGate {
    var limiter = AuthLimiter()
    let verifier = TokenVerifier()
    var log = AuthFailureLog()
    /// Runs once a second while ``log`` holds anything; nil otherwise.
    var logTimer: UV.Timer?
}
