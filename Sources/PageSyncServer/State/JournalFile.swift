#if canImport(Glibc)
import Glibc
#endif

/// A failed file operation: its one-line reason and the errno behind it.
struct FileFailure: Error, CustomStringConvertible {
    /// The errno of the call that failed (0 when the failure has none).
    var code: Int32
    /// The one-line reason.
    var description: String

    init(code: Int32 = errno, _ what: String? = nil) {
        self.code = code
        let text = String(cString: strerror(code))
        self.description = what.map { "\($0): \(text)" } ?? text
    }

    /// A failure whose reason is already written out.
    init(code: Int32, reason: String) {
        self.code = code
        self.description = reason
    }

    /// The disk, or the user's quota on it, is full: compaction may make room.
    var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }
}

/// Plain POSIX file operations of the journal, each failing with a one-line reason.
enum JournalFile {
    static func reason(_ what: String, _ code: Int32 = errno) -> String {
        "\(what): \(String(cString: strerror(code)))"
    }

    /// Creates `path` and its parents (mode 0700), like `mkdir -p`, and syncs the directory
    /// holding each one it made, so a power loss cannot drop a directory a journal was then
    /// written into (POSIX makes a new entry durable only once its directory is synced).
    static func makeDirectory(_ path: String) throws(StateEngineError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw StateEngineError("\(path): not a directory") }
            return
        }
        var parent = path.hasPrefix("/") ? "/" : "."
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o700) == 0 {
                if let why = syncDirectory(parent) { throw StateEngineError("\(parent): sync: \(why)") }
            } else if errno != EEXIST {
                throw StateEngineError(reason(prefix))
            }
            parent = prefix
            prefix += "/"
        }
    }

    /// Whether `path` names an existing file (of any kind).
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Takes `<directory>/lock` (an exclusive `flock`, held while the descriptor is open; the
    /// kernel lets go when the process ends, even by `kill -9`) and writes this process's id
    /// into it. Two daemons on one state dir would write one journal over each other: the
    /// second is refused, naming the first.
    static func lockDirectory(_ directory: String) throws(StateEngineError) -> Int32 {
        let path = "\(directory)/lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateEngineError(reason(path)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = (try? readAll(fd).get()).map { String(decoding: $0.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self) } ?? ""
            close(fd)
            guard code == EWOULDBLOCK else { throw StateEngineError(reason("\(path): lock", code)) }
            let who = Int32(holder).map { "another pagesyncd (pid \($0))" } ?? "another pagesyncd"
            throw StateEngineError("\(directory) is in use by \(who); each daemon needs its own --state-dir")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { writeAll(fd, $0, at: 0) }
        return fd
    }

    /// After the state dir was made again (``replace(_:temp:directory:with:)``): the lock held
    /// by `held` is on a file no longer in `directory`, so another daemon could take the dir.
    /// Takes `<directory>/lock` again and returns its descriptor (the caller closes `held`),
    /// nil when `held` is still the dir's lock, or why it cannot.
    static func relock(_ held: Int32, _ directory: String) -> Result<Int32, StateEngineError>? {
        var open = stat()
        var named = stat()
        if fstat(held, &open) == 0, stat("\(directory)/lock", &named) == 0,
           named.st_dev == open.st_dev, named.st_ino == open.st_ino {
            return nil
        }
        return Result { () throws(StateEngineError) in try lockDirectory(directory) }
    }

    /// The whole content of the file at `fd`, from offset 0 (also for /proc files, whose
    /// size reads as 0).
    static func readAll(_ fd: Int32) -> Result<[UInt8], StateEngineError> {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(StateEngineError(reason("fstat"))) }
        var bytes = [UInt8](repeating: 0, count: max(Int(st.st_size), 4096))
        var done = 0
        while true {
            if done == bytes.count { bytes += [UInt8](repeating: 0, count: bytes.count) }
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .failure(StateEngineError(reason("read"))) }
            if n == 0 { break }
            done += n
        }
        bytes.removeSubrange(done...)
        return .success(bytes)
    }

    /// Writes all of `bytes` to `fd` at `offset` (`pwrite`: journal files are not opened
    /// with O_APPEND, under which Linux ignores the offset); nil on success, else why not.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> FileFailure? {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                return FileFailure()
            }
            done += n
        }
        return nil
    }

    /// ``writeAll(_:_:at:)`` of an array.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> FileFailure? {
        bytes.withUnsafeBytes { writeAll(fd, $0, at: offset) }
    }

    /// 64 KiB of zeros, the unit of ``zeroFill(_:_:)``.
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Writes zeros over `range` of `fd` (``JournalPreallocation``); nil on success, else why not.
    static func zeroFill(_ fd: Int32, _ range: Range<Int>) -> FileFailure? {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = min(zeros.count, range.upperBound - offset)
            let why = zeros.withUnsafeBytes { writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[..<count]), at: offset) }
            if let why { return why }
            offset += count
        }
        return nil
    }

    /// `fdatasync`, retried on EINTR; nil on success, else why not.
    static func sync(_ fd: Int32) -> String? {
        while fdatasync(fd) != 0 {
            if errno == EINTR { continue }
            return String(cString: strerror(errno))
        }
        return nil
    }

    /// Why the open journal `fd` would not be found at `path` by the next start, or nil: it was
    /// removed (its link count is 0, e.g. the state dir was deleted while the daemon ran), or
    /// moved or replaced (`path` names another file, or none), so whatever is written to it is
    /// lost at the next start.
    static func detached(_ fd: Int32, from path: String) -> String? {
        var open = stat()
        guard fstat(fd, &open) == 0 else { return String(cString: strerror(errno)) }
        if open.st_nlink == 0 { return "the journal file was removed" }
        var named = stat()
        guard stat(path, &named) == 0, named.st_dev == open.st_dev, named.st_ino == open.st_ino else {
            return "the journal file was moved or replaced"
        }
        return nil
    }

    /// Why the open journal `fd` is no longer linked into any directory (the state dir or the
    /// file was removed), or nil. One `fstat`, no path lookup: cheap enough for every group.
    /// Records written to such a file are lost at the next start.
    static func unlinked(_ fd: Int32) -> String? {
        var open = stat()
        guard fstat(fd, &open) == 0 else { return String(cString: strerror(errno)) }
        return open.st_nlink == 0 ? "the journal file was removed" : nil
    }

    /// The bytes an unprivileged writer may still use on the file system holding `fd`, or nil
    /// when it cannot be read.
    static func freeBytes(_ fd: Int32) -> Int? {
        var fs = statvfs()
        guard fstatvfs(fd, &fs) == 0 else { return nil }
        let (free, overflow) = Int(clamping: fs.f_bavail).multipliedReportingOverflow(by: Int(clamping: fs.f_frsize))
        return overflow ? Int.max : free
    }

    /// Syncs a directory, so a rename in it is on the device.
    static func syncDirectory(_ path: String) -> String? {
        let dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(dfd) }
        return fsync(dfd) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Writes `bytes` to a new file `temp` (in `directory`, made first if it is missing) and
    /// syncs it, renames it to `final` and syncs the directory. Returns the new file's descriptor (not O_APPEND: write at its size).
    /// On failure `temp` is removed. Blocking: thread pool or before the loop runs.
    static func replace(_ final: String, temp: String, directory: String, with bytes: [UInt8]) -> Result<Int32, StateEngineError> {
        // The state dir may have been removed while the daemon ran: made again, as at start.
        if access(directory, F_OK) != 0 {
            do { try makeDirectory(directory) } catch { return .failure(error) }
        }
        let fd = open(temp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(StateEngineError(reason(temp))) }
        func fail(_ why: String) -> Result<Int32, StateEngineError> {
            close(fd)
            unlink(temp)
            return .failure(StateEngineError(why))
        }
        if let why = bytes.withUnsafeBytes({ writeAll(fd, $0, at: 0) }) { return fail("\(temp): \(why)") }
        if let why = sync(fd) { return fail("\(temp): sync: \(why)") }
        guard rename(temp, final) == 0 else { return fail(reason("\(final): rename")) }
        if let why = syncDirectory(directory) {
            close(fd)
            return .failure(StateEngineError("\(directory): sync: \(why)"))
        }
        return .success(fd)
    }

    /// The current boot's id: `$PAGESYNCD_BOOT_ID_PATH` or `/proc/sys/kernel/random/boot_id`.
    static func bootID() -> String? {
        let path = getenv("PAGESYNCD_BOOT_ID_PATH").map { String(cString: $0) } ?? "/proc/sys/kernel/random/boot_id"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard case .success(let bytes) = readAll(fd) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }
}
