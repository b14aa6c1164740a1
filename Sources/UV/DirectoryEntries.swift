#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The names in a directory, read with `readdir`: each name read in place up to its NUL. A
/// directory record is only as long as its name, so copying the whole `d_name` field (256
/// bytes) reads past the record, into bytes never written (valgrind reports them).
public enum DirectoryEntries {
    /// The names of the entries of `path`, without `.` and `..`; nil when it cannot be opened.
    public static func names(in path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
        while let entry = readdir(dir) {
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
