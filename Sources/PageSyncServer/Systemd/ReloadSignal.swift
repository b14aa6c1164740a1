import PageSyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends SIGHUP to a running pagesyncd (`pagesyncd --reload $MAINPID`, the units' `ExecReload=`),
/// so `systemctl reload` needs no `/bin/kill`. A process visible in /proc is signalled only if it
/// has this program's name; see ``ReloadRequest`` for the invisible case.
public enum ReloadSignal {
    /// Signals the pagesyncd whose pid is `pidText`; throws a one-line ``ConfigError`` when it
    /// is not one or cannot be signalled.
    public static func send(toPID pidText: String) throws(ConfigError) {
        let pid = try ReloadRequest.pid(from: pidText).get()
        let own = readSmallFile("/proc/self/comm") ?? "pagesyncd"
        let name = readSmallFile("/proc/\(pid)/comm")
        let signalable = kill(pid, 0) == 0
        if let refusal = ReloadRequest.refusal(pid: pid, targetName: name, signalable: signalable, ownName: own) {
            throw ConfigError(refusal)
        }
        guard kill(pid, SIGHUP) == 0 else {
            throw ConfigError("--reload: cannot signal process \(pid): \(String(cString: strerror(errno)))")
        }
    }

    /// The contents of a small file such as `/proc/PID/comm`, or nil when it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
