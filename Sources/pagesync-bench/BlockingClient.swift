import PageSyncCore
#if canImport(Glibc)
import Glibc
#endif

/// `body` with `127.0.0.1:port` as a `sockaddr` and its length (for `bind` and `connect`).
func withLoopbackAddress<T>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// Blocking loopback TCP for the single-connection measurements.
enum BlockingSocket {
    /// A connected blocking socket to 127.0.0.1:`port` with TCP_NODELAY, or nil.
    static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard withLoopbackAddress(port: port, { Glibc.connect(fd, $0, $1) }) == 0 else { close(fd); return nil }
        return fd
    }

    /// Sends every byte; false on error.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}

/// Line reader over a blocking socket.
struct BlockingLineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    init(fd: Int32) { self.fd = fd }

    /// The next line without its LF (and CR); nil on EOF or error.
    mutating func line() -> String? {
        withLine { String(decoding: $0.bytes, as: UTF8.self) }
    }

    /// The next line read in place by the pager's parser: `body` with a view of it (valid only
    /// inside `body`); nil on EOF or error.
    mutating func withLine<T>(_ body: (WireLineView) -> T) -> T? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                let result = buffer.withUnsafeBytes { body(WireLineView(UnsafeRawBufferPointer(rebasing: $0[start...nl]))) }
                start = nl + 1
                if start > 65536 { buffer.removeFirst(start); start = 0 }
                return result
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
        }
    }
}
