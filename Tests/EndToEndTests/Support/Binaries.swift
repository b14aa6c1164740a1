import Foundation

/// Finds the executables built by `swift build`.
///
/// `PAGESYNC_BIN_DIR` wins when set; otherwise the binaries are expected next to the running test
/// executable (SwiftPM puts `pagesyncd` and the test bundle in the same `.build/<triple>/debug`).
enum Binaries {
    /// The directory searched for executables.
    static var directory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["PAGESYNC_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent()
    }

    /// The path of executable `name`, or an error explaining how to build it.
    static func path(of name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(name) not found at \(path); run `swift build` first or set PAGESYNC_BIN_DIR")
        }
        return path
    }

    /// The path of the daemon under test.
    static func pagesyncd() throws -> String {
        try path(of: "pagesyncd")
    }
}
