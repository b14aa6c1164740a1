import Foundation
import Testing

/// A test that needs a tool this machine lacks. Outside CI it prints `SKIPPED: <skipped>` and
/// passes; under CI (`CI` set), where `scripts/test` installs every tool, that is a failure,
/// recorded as `underCI` at the caller.
func cannotRunHere(skipped: String, underCI: String, sourceLocation: SourceLocation = #_sourceLocation) {
    if ProcessInfo.processInfo.environment["CI"] != nil {
        Issue.record(Comment(rawValue: underCI), sourceLocation: sourceLocation)
    }
    print("SKIPPED: \(skipped)")
}
