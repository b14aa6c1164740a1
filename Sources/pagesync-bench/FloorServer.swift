import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

// The Glibc module does not export <sys/epoll.h>, and the package has no C target of ours to
// include it, so the three calls are declared here (x86-64/aarch64 Linux ABI; ints and pointers).
@_silgen_name("epoll_create1") private func sys_epoll_create1(_ flags: Int32) -> Int32
@_silgen_name("epoll_ctl") private func sys_epoll_ctl(_ epfd: Int32, _ op: Int32, _ fd: Int32, _ event: UnsafeMutableRawPointer?) -> Int32
@_silgen_name("epoll_wait") private func sys_epoll_wait(_ epfd: Int32, _ events: UnsafeMutableRawPointer?, _ maxEvents: Int32, _ timeout: Int32) -> Int32

private let EPOLL_IN: UInt32 = 0x001, EPOLL_OUT: UInt32 = 0x004, EPOLL_ERR: UInt32 = 0x008, EPOLL_HUP: UInt32 = 0x010
private let EPOLL_CTL_ADD_: Int32 = 1, EPOLL_CTL_MOD_: Int32 = 3

/// `struct epoll_event` is packed on x86-64 (12 bytes: u32 events, u64 data) and 16 bytes
/// (naturally aligned) elsewhere.
#if arch(x86_64)
private let epollEventSize = 12
private let epollDataOffset = 4
#else
private let epollEventSize = 16
private let epollDataOffset = 8
#endif

/// Registers or modifies `fd` in `epfd` for `events`, with the fd as the event's data.
private func epollControl(_ epfd: Int32, _ op: Int32, _ fd: Int32, _ events: UInt32) {
    var raw = [UInt8](repeating: 0, count: 16)
    raw.withUnsafeMutableBytes { bytes in
        bytes.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
        bytes.storeBytes(of: UInt64(UInt32(bitPattern: fd)), toByteOffset: epollDataOffset, as: UInt64.self)
        _ = sys_epoll_ctl(epfd, op, fd, bytes.baseAddress)
    }
}

/// The raw floor: a minimal single-threaded epoll broadcaster. Every line a connection sends is
/// written, with plain `write()` calls, to every *other* connection: the lines of one read are
/// sent as one batch, one `write()` per connection (a single change is one write of one line);
/// `PING` is answered with `PONG` to the sender only. What a socket does not take is kept and flushed on
/// `EPOLLOUT`. No framing library, no allocation per delivery: it marks what this machine can do.
final class FloorServer {
    private final class Connection {
        let fd: Int32
        var position: Int          // index in `active`
        var inbound: [UInt8] = []
        var outbound: [UInt8] = []
        var wantsWrite = false
        init(fd: Int32, position: Int) { self.fd = fd; self.position = position }
    }

    private let listenFD: Int32
    private let epollFD: Int32
    private var byFD: [Connection?] = []
    private var active: [Connection] = []

    /// Binds 127.0.0.1:`port` (0 = any free port). Exits the process on failure.
    init(port: Int) {
        let listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        self.listenFD = listenFD
        var one: Int32 = 1
        setsockopt(listenFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard withLoopbackAddress(port: port, { bind(listenFD, $0, $1) }) == 0, Glibc.listen(listenFD, 4096) == 0 else {
            log("floor-server: cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
            exit(1)
        }
        epollFD = sys_epoll_create1(0)
        epollControl(epollFD, EPOLL_CTL_ADD_, listenFD, EPOLL_IN)
        signal(SIGPIPE, SIG_IGN)
    }

    /// The bound port.
    var port: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Serves forever.
    func run() -> Never {
        let maxEvents = 1024
        let events = UnsafeMutableRawPointer.allocate(byteCount: maxEvents * epollEventSize, alignment: 8)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = sys_epoll_wait(epollFD, events, Int32(maxEvents), -1)
            if n < 0 { if errno == EINTR { continue }; exit(1) }
            for i in 0..<Int(n) {
                let flags = events.loadUnaligned(fromByteOffset: i * epollEventSize, as: UInt32.self)
                let fd = Int32(truncatingIfNeeded: events.loadUnaligned(fromByteOffset: i * epollEventSize + epollDataOffset, as: UInt64.self))
                if fd == listenFD { acceptAll(); continue }
                guard Int(fd) < byFD.count, let connection = byFD[Int(fd)] else { continue }
                if flags & EPOLL_OUT != 0 { flush(connection) }
                if flags & (EPOLL_IN | EPOLL_HUP | EPOLL_ERR) != 0 {
                    readFrom(connection, &buffer)
                }
            }
        }
    }

    private func acceptAll() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return }  // EAGAIN, or EMFILE: leave it in the backlog
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Int(fd) >= byFD.count { byFD += [Connection?](repeating: nil, count: Int(fd) + 1024 - byFD.count) }
            let connection = Connection(fd: fd, position: active.count)
            byFD[Int(fd)] = connection
            active.append(connection)
            epollControl(epollFD, EPOLL_CTL_ADD_, fd, EPOLL_IN)
        }
    }

    private func drop(_ connection: Connection) {
        guard byFD[Int(connection.fd)] === connection else { return }
        byFD[Int(connection.fd)] = nil
        let last = active.removeLast()
        if last !== connection {
            active[connection.position] = last
            last.position = connection.position
        }
        close(connection.fd)
    }

    private func readFrom(_ connection: Connection, _ buffer: inout [UInt8]) {
        while true {
            let n = buffer.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
            if n == 0 { drop(connection); return }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                drop(connection); return
            }
            connection.inbound.append(contentsOf: buffer[0..<n])
            // Every complete line of this read: PINGs are answered; the others are gathered
            // into one batch that goes to every other connection with one write() each.
            // PONGs go out after the batch, so a PING after a line acknowledges its broadcast.
            var batch: [UInt8] = []
            var pings = 0
            var start = 0
            while let nl = connection.inbound[start...].firstIndex(of: 0x0A) {
                let line = connection.inbound[start...nl]
                start = nl + 1
                if line.count >= 4 && line.starts(with: [0x50, 0x49, 0x4E, 0x47]) {  // PING
                    pings += 1
                } else {
                    batch.append(contentsOf: line)
                }
            }
            connection.inbound.removeFirst(start)
            if !batch.isEmpty { broadcast(batch, from: connection) }
            if byFD[Int(connection.fd)] !== connection { return }
            for _ in 0..<pings { send(Array("PONG\n".utf8), to: connection) }
            if byFD[Int(connection.fd)] !== connection { return }
            if n < buffer.count { return }
        }
    }

    private func broadcast(_ batch: [UInt8], from sender: Connection) {
        batch.withUnsafeBytes { bytes in
            var i = 0
            while i < active.count {
                let connection = active[i]
                i += 1
                guard connection !== sender else { continue }
                if !connection.outbound.isEmpty {
                    connection.outbound.append(contentsOf: bytes)
                    continue
                }
                let written = write(connection.fd, bytes.baseAddress, bytes.count)
                if written == bytes.count { continue }
                if written < 0 && errno != EAGAIN {
                    drop(connection); i -= 1
                    continue
                }
                connection.outbound.append(contentsOf: bytes[max(0, written)...])
                watchWrites(connection, true)
            }
        }
    }

    private func send(_ bytes: [UInt8], to connection: Connection) {
        if !connection.outbound.isEmpty { connection.outbound += bytes; return }
        let written = bytes.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
        if written == bytes.count { return }
        if written < 0 && errno != EAGAIN { drop(connection); return }
        connection.outbound += bytes[max(0, written)...]
        watchWrites(connection, true)
    }

    private func flush(_ connection: Connection) {
        while !connection.outbound.isEmpty {
            let written = connection.outbound.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EAGAIN { return }
                drop(connection); return
            }
            connection.outbound.removeFirst(written)
        }
        watchWrites(connection, false)
    }

    private func watchWrites(_ connection: Connection, _ on: Bool) {
        guard connection.wantsWrite != on else { return }
        connection.wantsWrite = on
        epollControl(epollFD, EPOLL_CTL_MOD_, connection.fd, EPOLL_IN | (on ? EPOLL_OUT : 0))
    }
}

/// `pagesync-bench free-port`: prints a TCP port on 127.0.0.1 that was free a moment ago (for
/// servers that cannot pick their own, like redis-server).
struct FreePortCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "free-port", abstract: "Print a free TCP port on 127.0.0.1.")

    func run() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw ExitCode(1) }
        writeAll(1, "\(UInt16(bigEndian: address.sin_port))\n")
    }
}
