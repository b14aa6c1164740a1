#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed when the test ends.
final class TempDir {
    let path: String

    init() {
        var template = Array("/tmp/pagesync-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit {
        _ = system("rm -rf '\(path)'")
    }

    @discardableResult
    func write(_ name: String, _ text: String) -> String {
        let file = "\(path)/\(name)"
        let f = fopen(file, "w")!
        _ = text.withCString { fputs($0, f) }
        fclose(f)
        return file
    }

    func read(_ name: String) -> String? {
        guard let f = fopen("\(path)/\(name)", "r") else { return nil }
        defer { fclose(f) }
        var out = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), f) != nil {
            out += buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        return out
    }
}
