import Foundation

/// Files a test leaves behind for people to look at (measured latencies, screens, screenshots):
/// in `$PAGESYNC_TEST_ARTEFACTS`, or `.build/test-artefacts` of the package. `scripts/test`
/// prints where they are.
enum TestArtefacts {
    /// The directory (created on first use).
    static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["PAGESYNC_TEST_ARTEFACTS"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/test-artefacts", isDirectory: true)
    }()

    /// Writes `contents` to `name` in ``directory``, replacing it; returns its path.
    @discardableResult
    static func write(_ name: String, _ contents: String) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
