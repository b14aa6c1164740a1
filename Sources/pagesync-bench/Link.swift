import PageSyncCore
import UV
#if canImport(Glibc)
import Glibc
#endif

/// A line-oriented connection of the coordinator (to a worker, or the driver/pinger to the
/// target). Every complete line is handed to `onLine` with its receipt time.
final class Link {
    let connection: TCPConnection
    private var splitter = LineSplitter()
    /// The current line handler; replaced per phase.
    var onLine: ((UnsafeRawBufferPointer, UInt64) -> Void)?
    /// Called once when the peer closes or the connection fails.
    var onClosed: ((String) -> Void)?
    private(set) var closed = false

    init(_ connection: TCPConnection) {
        self.connection = connection
        connection.setNoDelay(true)
        // The read callback keeps the link alive until the connection is closed (closing drops it).
        connection.startReading { [self] event in
            switch event {
            case .data(let bytes):
                let now = MonotonicClock.nanoseconds()
                splitter.feed(bytes) { line in onLine?(line, now) }
            case .eof: close(reason: "eof")
            case .error(let error): close(reason: error.name)
            }
        }
    }

    private func close(reason: String) {
        guard !closed else { return }
        closed = true
        connection.close()
        onClosed?(reason)
    }

    /// Writes raw bytes.
    func write(_ bytes: [UInt8]) { connection.write(bytes) }
    /// Writes a text line (LF appended): the bench's own control lines to and from workers.
    func send(_ line: String) { connection.write(Array((line + "\n").utf8)) }
    /// Writes a pagesync command.
    func send(_ command: Command) { connection.write(CommandEncoder.bytes(command)) }

    /// Connects and wraps the connection.
    static func connect(loop: EventLoop, host: String, port: Int, _ done: @escaping (Result<Link, UVError>) -> Void) {
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            done(result.map { Link($0) })
        }
    }
}
