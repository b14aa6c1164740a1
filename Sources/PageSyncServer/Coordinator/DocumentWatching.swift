import PageSyncCore
import UV

/// Which directories the coordinator watches for edits of the rooms' documents, and the
/// timers that re-index a room once its file goes quiet. Loop thread only.
struct DocumentWatching {
    /// Which rooms serve which document file, by directory (rebuilt by ``Coordinator/watchDocuments()``).
    var index = DocumentWatchIndex()
    /// One watcher per directory.
    var watchers: [String: FileWatcher] = [:]
    /// Directories whose watch could not be started yet, with the last reason.
    var unwatched: [String: String] = [:]
    /// Tries the unwatched directories again every second while there are any.
    var retryTimer: UV.Timer?
    /// One debounce timer per room being re-indexed.
    var reindexTimers: [String: UV.Timer] = [:]

    /// Shutdown: every watcher and timer closed.
    mutating func closeAll() {
        for watcher in watchers.values { watcher.close() }
        watchers.removeAll()
        retryTimer?.close()
        retryTimer = nil
        unwatched.removeAll()
        for timer in reindexTimers.values { timer.close() }
        reindexTimers.removeAll()
    }
}
