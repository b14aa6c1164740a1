#if canImport(Glibc)
import Glibc
#endif
import UV

/// Sleeps the calling thread (never a loop thread) for `milliseconds`.
func sleepMilliseconds(_ milliseconds: Int) {
    var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Percentiles of a sample (nearest-rank on the sorted values).
struct Percentiles: Sendable {
    var p50: Double, p90: Double, p99: Double, max: Double, count: Int

    /// Nil for an empty sample.
    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double {
            let index = Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)
            return sorted[Swift.min(index, sorted.count - 1)]
        }
        p50 = rank(0.50); p90 = rank(0.90); p99 = rank(0.99); max = sorted[sorted.count - 1]
        count = sorted.count
    }
}

/// The median of a sample; nil when empty.
func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Figures read from `/proc/<pid>` of a server under test.
enum ProcessProbe {
    /// A `kB` field of `/proc/<pid>/status` (e.g. `VmRSS`, `VmHWM`) in KiB; nil if unreadable.
    static func statusKiB(pid: Int32, field: String) -> Int? {
        guard let text = readSmallFile("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// User plus system CPU time the process has used so far, in milliseconds (from
    /// `/proc/<pid>/stat`, in clock ticks); nil if unreadable.
    static func cpuMilliseconds(pid: Int32) -> Double? {
        guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) * 1000 / ticks : nil
    }

    /// Number of open file descriptors (entries of `/proc/<pid>/fd`); nil if unreadable.
    static func fdCount(pid: Int32) -> Int? {
        DirectoryEntries.names(in: "/proc/\(pid)/fd")?.count
    }

    /// The whole content of a small text file (e.g. under /proc); nil if it cannot be read.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Starting child processes with `posix_spawn`.
enum Spawn {
    /// The path of the running executable (for re-executing ourselves as a worker).
    static var selfExecutable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Spawns `path` with `arguments` (argv[0] excluded). When `stderrPipe` is true the child's
    /// stderr goes to a pipe whose read end is returned. Returns nil if spawning failed.
    static func run(_ path: String, _ arguments: [String], stderrPipe: Bool = false,
                    stdoutToNull: Bool = false) -> (pid: pid_t, stderr: Int32?)? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        if stderrPipe {
            guard pipe(&pipeFDs) == 0 else { return nil }
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
            posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
            posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        }
        if stdoutToNull {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        if stderrPipe { close(pipeFDs[1]) }
        guard rc == 0 else {
            if stderrPipe { close(pipeFDs[0]) }
            return nil
        }
        return (pid, stderrPipe ? pipeFDs[0] : nil)
    }

    /// Waits for `pid` to exit; returns its exit status (or 128+signal).
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }
}

/// Splits a byte stream into lines (LF; a CR before it is dropped), keeping the incomplete tail.
/// Cheap enough for millions of ~90-byte lines per second: memchr over the read buffer, and a
/// copy only for the tail of a line that spans reads.
struct LineSplitter {
    private var carry: [UInt8] = []

    /// Calls `body` for each complete line in `bytes` (plus any carried prefix).
    @inline(__always)
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var start = 0
        let end = bytes.count
        if !carry.isEmpty {
            guard let nl = memchr(base, 0x0A, end) else {
                carry.append(contentsOf: bytes)
                return
            }
            let idx = base.distance(to: UnsafeRawPointer(nl))
            carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<idx]))
            if carry.last == 0x0D { carry.removeLast() }
            carry.withUnsafeBytes { body($0) }
            carry.removeAll(keepingCapacity: true)
            start = idx + 1
        }
        while start < end {
            guard let nl = memchr(base + start, 0x0A, end - start) else {
                carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                return
            }
            var idx = base.distance(to: UnsafeRawPointer(nl))
            let next = idx + 1
            if idx > start && bytes[idx - 1] == 0x0D { idx -= 1 }
            body(UnsafeRawBufferPointer(rebasing: bytes[start..<idx]))
            start = next
        }
    }
}

extension UnsafeRawBufferPointer {
    /// True when the bytes begin with the ASCII `prefix`.
    @inline(__always)
    func hasASCIIPrefix(_ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard count >= n, let base = baseAddress else { return false }
        return memcmp(base, prefix.utf8Start, n) == 0
    }

    /// The bytes as a String (lossy).
    var string: String { String(decoding: self, as: UTF8.self) }
}

/// Carries a loop-thread-only value through a `@Sendable` closure that runs on that loop thread.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A one-shot value handed from the loop thread to a waiting plain thread.
final class Handoff<Value>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var value: Value?

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Delivers the value (first one wins) and wakes the waiter.
    func put(_ newValue: Value) {
        pthread_mutex_lock(&mutex)
        if value == nil { value = newValue }
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Blocks until a value was put.
    func take() -> Value {
        pthread_mutex_lock(&mutex)
        while value == nil { pthread_cond_wait(&condition, &mutex) }
        let result = value!
        pthread_mutex_unlock(&mutex)
        return result
    }
}

/// Writes a line to stderr (progress and diagnostics; results go to stdout/JSON).
func log(_ message: String) {
    writeAll(2, message + "\n")
}

/// Writes a whole string to a file descriptor (stdout = 1, stderr = 2), unbuffered.
func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

/// Formats a Double with a fixed number of decimals (no Foundation).
func fmt(_ value: Double, _ decimals: Int = 1) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0 { return String(Int(rounded)) }
    let negative = rounded < 0
    let absolute = abs(rounded)
    let whole = Int(absolute)
    let fraction = Int(((absolute - Double(whole)) * scale).rounded())
    var fractionText = String(fraction)
    while fractionText.count < decimals { fractionText = "0" + fractionText }
    return (negative ? "-" : "") + String(whole) + "." + fractionText
}
