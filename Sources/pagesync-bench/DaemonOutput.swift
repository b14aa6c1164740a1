#if canImport(Glibc)
import Glibc
#endif

/// Reading a daemon's stderr: waiting for its "listening on" line, then discarding the rest.
enum DaemonOutput {
    /// Reads the daemon's stderr until a "listening on HOST:PORT" line; returns the port.
    static func waitForListening(_ fd: Int32) -> Int? {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            pending += buffer[0..<n]
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                FileHandleless.echo(line)
                let words = line.split(separator: " ")
                guard let at = words.indices.first(where: { $0 + 2 < words.count + 0 && words[$0] == "listening" && words[$0 + 1] == "on" }),
                      at + 2 < words.count else { continue }
                let rest = words[at + 2]
                if let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...].filter(\.isNumber)) {
                    return port
                }
            }
        }
    }

    /// Keeps reading (and discarding) the daemon's stderr so it never blocks on a full pipe.
    static func drainInBackground(_ fd: Int32) {
        var thread = pthread_t()
        pthread_create(&thread, nil, { argument in
            let fd = Int32(Int(bitPattern: argument))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
            }
            close(fd)
            return nil
        }, UnsafeMutableRawPointer(bitPattern: Int(fd)))
        pthread_detach(thread)
    }
}
