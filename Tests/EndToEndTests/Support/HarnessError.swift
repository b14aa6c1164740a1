import Foundation

/// A failure of the end-to-end harness or of the daemon under test, with a message that says
/// what was expected and what was seen. Tests throw it to stop at the first broken step.
struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, for people reading the test report.
    var description: String

    /// Creates an error carrying `description` verbatim.
    init(_ description: String) {
        self.description = description
    }
}

/// How long one blocking step (a read, a write, a connect) may take before the harness gives up.
/// This guards against hangs; it is never the subject of an assertion. Override with
/// `PAGESYNC_E2E_TIMEOUT` (seconds) on a very slow machine.
let stepTimeoutSeconds: Int = {
    if let text = ProcessInfo.processInfo.environment["PAGESYNC_E2E_TIMEOUT"], let value = Int(text), value > 0 {
        return value
    }
    return 5
}()

/// Shortens `text` to its last `limit` characters, for error messages that quote daemon output.
func tail(_ text: String, _ limit: Int = 2000) -> String {
    text.count <= limit ? text : "…" + text.suffix(limit)
}
