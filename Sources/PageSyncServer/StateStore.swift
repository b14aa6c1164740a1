#if canImport(Glibc)
import Glibc
#endif
import PageSyncCore

/// Keeps each room's page and version in `<directory>/<room>.state`.
///
/// A save writes a temporary file, fsyncs it (when `fsync` is on), renames it
/// over the old file and fsyncs the directory, so a crash at any moment leaves
/// either the old state or the new one, never a torn file.
public struct StateStore: Sendable {
    /// The state directory.
    public let directory: String
    /// Whether saves are fsynced (file and directory) before they count as done.
    public let fsync: Bool

    /// A store over `directory`, which is created (mode 0700) if missing.
    public init(directory: String, fsync: Bool) throws(StateStoreError) {
        self.directory = directory
        self.fsync = fsync
        try Self.makeDirectory(directory)
    }

    private static func makeDirectory(_ path: String) throws(StateStoreError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw StateStoreError("\(path): not a directory") }
            return
        }
        // Create missing parents too, like `mkdir -p`.
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw StateStoreError("\(prefix): \(String(cString: strerror(errno)))")
            }
            prefix += "/"
        }
    }

    /// The file holding a room's state.
    public func path(forRoom room: String) -> String { "\(directory)/\(room).state" }

    /// The saved state of a room, or `nil` when there is none or it is unreadable
    /// (an unreadable file is reported through `problem`).
    public func load(room: String, problem: (String) -> Void = { _ in }) -> PersistedRoom? {
        let path = path(forRoom: room)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno != ENOENT { problem("\(path): \(String(cString: strerror(errno)))") }
            return nil
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 64 << 10 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        guard let state = PersistedRoomCodec.decode(bytes) else {
            problem("\(path): not a pagesync state file; ignoring it")
            return nil
        }
        return state
    }

    /// Saves a room's state atomically.
    ///
    /// Without fsync the state is overwritten in place with one `pwrite` of a record padded
    /// (with an ignored `pad=` line) to a size that never shrinks, so the file is never
    /// truncated or renamed: a process crash leaves the old record or the new one. The
    /// temp-file-and-rename path costs ~0.5 ms per save on ext4 even without fsync, because
    /// ext4 (auto_da_alloc) starts writeback of a file renamed over another one.
    public func save(_ state: PersistedRoom, room: String) throws(StateStoreError) {
        let final = path(forRoom: room)
        let bytes = PersistedRoomCodec.encode(state)
        if !fsync {
            try overwriteInPlace(bytes, path: final)
            return
        }
        let temp = "\(directory)/.\(room).state.tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateStoreError("\(temp): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                close(fd)
                throw StateStoreError("\(temp): \(String(cString: strerror(e)))")
            }
            written += n
        }
        if fsync && fdatasync(fd) != 0 {
            let e = errno
            close(fd)
            throw StateStoreError("\(temp): fsync: \(String(cString: strerror(e)))")
        }
        close(fd)
        guard rename(temp, final) == 0 else {
            throw StateStoreError("\(final): rename: \(String(cString: strerror(errno)))")
        }
        if fsync {
            let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 {
                _ = Glibc.fsync(dfd)
                close(dfd)
            }
        }
    }
}

extension StateStore {
    /// The unit a saved record is padded to.
    static let recordBlock = 512

    /// One `pwrite` at offset 0 of `bytes` plus a `pad=---` line, padded to a multiple of
    /// `recordBlock` and never shorter than the file already is (so it never needs a truncate).
    fileprivate func overwriteInPlace(_ bytes: [UInt8], path: String) throws(StateStoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateStoreError("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        let existing = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
        let minimum = bytes.count + 5  // "pad=" + LF
        var size = (minimum + Self.recordBlock - 1) / Self.recordBlock * Self.recordBlock
        if existing > size { size = existing }
        var record = bytes
        record.reserveCapacity(size)
        record += Array("pad=".utf8)
        record += [UInt8](repeating: UInt8(ascii: "-"), count: size - minimum)
        record.append(0x0A)
        var written = 0
        while written < record.count {
            let n = record.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StateStoreError("\(path): \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }
}

/// A state directory or file problem, in one line.
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    /// The one-line explanation.
    public var description: String
    init(_ description: String) { self.description = description }
}
