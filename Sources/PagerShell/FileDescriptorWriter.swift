#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking writes to a file descriptor (the terminal's output, stdout, stderr).
///
/// The pager writes its frames with plain blocking `write(2)` on descriptor 1, as `less` does: a
/// frame is a few kilobytes, and a blocking write keeps every byte in order with the control
/// sequences written on the way out (leaving the alternate screen must come after the last frame,
/// never before bytes still queued somewhere). libuv reads the keyboard on its own reopened
/// descriptor, so descriptor 1 stays blocking.
struct FileDescriptorWriter {
    /// The descriptor written to.
    let fd: Int32

    /// Writes all of `text`'s UTF-8 bytes; returns false if the descriptor failed (e.g. `EPIPE`,
    /// `EIO` after a hang-up). Retries on `EINTR` and waits out `EAGAIN`.
    @discardableResult
    func write(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes`; see ``write(_:)-(String)``.
    @discardableResult
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var next = bytes.baseAddress else { return true }
        var left = bytes.count
        while left > 0 {
            #if canImport(Glibc)
            let n = Glibc.write(fd, next, left)
            #else
            let n = Darwin.write(fd, next, left)
            #endif
            if n > 0 {
                next += n
                left -= n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, -1)
            } else {
                return false
            }
        }
        return true
    }

    /// Standard output.
    static let standardOutput = FileDescriptorWriter(fd: STDOUT_FILENO)
    /// Standard error.
    static let standardError = FileDescriptorWriter(fd: STDERR_FILENO)
}

/// Whether `fd` is a terminal.
func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
