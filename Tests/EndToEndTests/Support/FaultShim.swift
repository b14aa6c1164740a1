import Foundation
import Synchronization

/// `Tests/Faults/faultinject.c`, compiled once per test process with the system's C compiler:
/// an LD_PRELOAD library that makes chosen file-system calls of the daemon fail
/// (the file's comment documents its environment variables).
enum FaultShim {
    private static let built = Mutex<Result<String, HarnessError>?>(nil)

    /// The path of the compiled library (built on first use; `PAGESYNC_FAULT_SHIM` names one
    /// already built, as scripts/torture does).
    static func library() throws -> String {
        if let given = ProcessInfo.processInfo.environment["PAGESYNC_FAULT_SHIM"], !given.isEmpty { return given }
        return try built.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<String, HarnessError>
            do throws(HarnessError) { result = .success(try compile()) } catch { result = .failure(error) }
            cached = result
            return try result.get()
        }
    }

    /// The source file, found from this file's place in the repository.
    static var source: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Faults/faultinject.c")
    }

    private static func compile() throws(HarnessError) -> String {
        let output = NSTemporaryDirectory() + "/pagesync-faultinject-\(getpid()).so"
        // cc where there is one; else the clang that comes with Swift.
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        let compilers = ["cc", "clang", "gcc"].flatMap { name in path.map { "\($0)/\(name)" } }
        guard let compiler = compilers.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("no C compiler (cc, clang or gcc) on PATH to build the fault shim")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-shared", "-fPIC", "-O2", "-o", output, source.path, "-ldl", "-lpthread"]
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch { throw HarnessError("cannot run cc for the fault shim: \(error)") }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw HarnessError("cc could not build \(source.path): \(text)")
        }
        return output
    }

    /// The daemon's environment for `spec` (`PAGESYNC_FAULT`) on files under `path`, killing
    /// the daemon `killAfter` tracked calls after the first fault (nil: never), logging each
    /// injected fault to `log`.
    /// `free`: the free space the daemon is told its state dir has (`PAGESYNC_FAULT_FREE`).
    static func environment(spec: String, path: String, killAfter: Int?, log: String, seed: UInt64, free: Int? = nil) throws -> [String: String] {
        var environment = [
            "LD_PRELOAD": try library(),
            "PAGESYNC_FAULT": spec,
            "PAGESYNC_FAULT_PATH": path,
            "PAGESYNC_FAULT_LOG": log,
            "PAGESYNC_FAULT_SEED": "\(seed % 1_000_000 + 1)",
        ]
        if let killAfter { environment["PAGESYNC_FAULT_KILL"] = "\(killAfter)" }
        if let free { environment["PAGESYNC_FAULT_FREE"] = "\(free)" }
        return environment
    }
}
