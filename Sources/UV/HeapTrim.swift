import CLibUV
#if canImport(Glibc)
import Glibc
#endif

/// Hands the pages of freed heap memory back to the system (glibc's `malloc_trim(0)`), so that
/// a burst of short-lived allocations does not keep the process at the burst's peak RSS.
/// Walks the heap: call it rarely (see `HeapTrimPolicy`), never in a hot path.
public enum HeapTrim {
    /// Trims every malloc arena. True when memory was returned; always false without glibc.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        #if canImport(Glibc)
        return malloc_trim(0) == 1
        #else
        return false
        #endif
    }
}

/// The process's own memory, as the kernel counts it.
public enum ProcessMemory {
    /// Resident bytes now (`/proc/self/statm`'s second field, in pages), or nil where there is
    /// no such file. A read of procfs: it never waits on a disk.
    public static func residentBytes() -> Int? {
        #if canImport(Glibc)
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
        #else
        return nil
        #endif
    }
}
