#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PageSyncCore

/// Reads a notes file (see ``Document/notesPath(for:)``) whole, up to ``PageNotes/maxFileBytes``.
enum NotesFile {
    /// What reading found.
    enum Outcome: Equatable {
        /// No such file: the document has no notes file.
        case missing
        /// It could not be read, or is too large: one line saying why.
        case failed(String)
        /// Its bytes.
        case bytes([UInt8])
    }

    static func read(_ path: String) -> Outcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .failed(String(cString: strerror(errno))) }
        defer { _ = close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failed(String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failed("not a regular file; no notes") }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(String(cString: strerror(errno)))
            }
            if n == 0 { return .bytes(out) }
            out.append(contentsOf: buffer[0..<n])
            if out.count > PageNotes.maxFileBytes {
                return .failed("larger than \(PageNotes.maxFileBytes >> 20) MiB, the most read; no notes")
            }
        }
    }
}
