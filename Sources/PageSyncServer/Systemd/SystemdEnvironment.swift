#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the process environment without Foundation.
public enum SystemdEnvironment {
    /// A snapshot of the process environment (`environ`). When a name occurs twice, the first wins,
    /// as with `getenv(3)`.
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let assignment = String(cString: pointer)
            if let equals = assignment.firstIndex(of: "=") {
                let name = String(assignment[..<equals])
                if result[name] == nil {
                    result[name] = String(assignment[assignment.index(after: equals)...])
                }
            }
            entry += 1
        }
        return result
    }

    /// The calling process's id.
    public static var pid: Int32 { getpid() }
}
