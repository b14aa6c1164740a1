import Foundation

/// Finds the executables the end-to-end tests run.
///
/// `PAGESYNC_BIN_DIR` wins when set (scripts/test sets it to its release build). Otherwise the
/// tests run the release binaries users run when they are there and current: a plain
/// `swift test` builds debug binaries beside its test executable, and uses the release build
/// of the same build directory instead (`swift build -c release`, as scripts/run-daemon and
/// scripts/test make it) when every executable is there and newer than every file under
/// Sources/ and Package.swift. Else (no release build, or an older one) the binaries beside
/// the test executable.
enum Binaries {
    /// The executables the tests run.
    static let names = ["pagesyncd", "pagesync", "pagesync-bench"]

    /// The directory searched for executables.
    static let directory: URL = {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["PAGESYNC_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if let release = currentRelease(besides: beside) { return release }
        return beside
    }()

    /// The release build beside a debug build directory (`.build/<triple>/debug` and
    /// `.build/<triple>/release`), if it holds every executable, each newer than the sources.
    static func currentRelease(besides debug: URL) -> URL? {
        guard debug.lastPathComponent == "debug" else { return nil }
        let release = debug.deletingLastPathComponent().appendingPathComponent("release", isDirectory: true)
        let built = names.map { modificationDate(release.appendingPathComponent($0).path) }
        guard let oldest = built.compactMap({ $0 }).min(), built.allSatisfy({ $0 != nil }),
              let newestSource = newestSourceDate(), oldest > newestSource else { return nil }
        return release
    }

    /// Whether the binaries under test are a debug build (`swift build`'s `debug` directory):
    /// unoptimized, so CPU budgets set for the binaries users run do not apply to them.
    static var areUnoptimized: Bool { directory.lastPathComponent == "debug" }

    /// The newest modification time of Package.swift and the files under Sources/.
    static func newestSourceDate() -> Date? {
        let root = DocumentationTests.root
        var newest = modificationDate(root.appendingPathComponent("Package.swift").path)
        let sources = root.appendingPathComponent("Sources")
        guard let walk = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: [.contentModificationDateKey]) else {
            return nil
        }
        for case let url as URL in walk {
            if let date = try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate {
                newest = max(newest ?? date, date)
            }
        }
        return newest
    }

    static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
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
