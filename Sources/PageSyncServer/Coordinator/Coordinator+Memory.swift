import PageSyncCore
import UV

extension Coordinator {
    /// Asked by the status timer: gives freed heap back once clients that made the daemon
    /// grow have left (``DepartureTrimPolicy``).
    func trimHeapAfterDepartures() {
        guard !shuttingDown, let resident = ProcessMemory.residentBytes(),
              departureTrimPolicy.shouldTrim(resident: resident, clients: sessions.count, now: MonotonicClock.milliseconds())
        else { return }
        let started = ThreadCPUTime.now()
        HeapTrim.releaseFreeMemory()
        let after = ProcessMemory.residentBytes() ?? resident
        departureTrimPolicy.trimmed(resident: after, clients: sessions.count)
        logger.debug("heap trimmed after clients left: \(resident >> 10) KiB resident before, \(after >> 10) KiB after (\(ThreadCPUTime.now() - started))")
    }
}
