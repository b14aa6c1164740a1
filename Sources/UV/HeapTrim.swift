import CLibUV

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
