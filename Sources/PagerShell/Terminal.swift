import PageSyncPager
import UV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pager's terminal: keys come in through a libuv TTY handle in raw mode; frames go out with
/// blocking writes on descriptor 1. Loop thread only.
///
/// Input is descriptor 0 when it is a terminal, else `/dev/tty` (so `pagesync < file` still
/// reads keys, as `less` does).
final class Terminal {
    private let input: TTY
    private let output = FileDescriptorWriter.standardOutput
    /// Whether the terminal is currently in raw mode on the alternate screen.
    private(set) var isEntered = false

    /// Opens the keyboard side. Throws a one-line message when there is no terminal to read.
    init(loop: EventLoop) throws(PagerShellError) {
        var fd: Int32 = STDIN_FILENO
        var owns = false
        if !isTerminal(fd) {
            fd = open("/dev/tty", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw PagerShellError("pagesync: no terminal to read keys from") }
            owns = true
        }
        do {
            input = try TTY(loop: loop, fd: fd)
        } catch {
            if owns { closeDescriptor(fd) }
            throw PagerShellError("pagesync: cannot use the terminal: \(error)")
        }
    }

    /// The terminal's size now (80x24 if it cannot be asked).
    var size: TerminalSize {
        if let s = input.windowSize, s.columns > 0, s.rows > 0 {
            return TerminalSize(columns: s.columns, rows: s.rows)
        }
        return TerminalSize(columns: 80, rows: 24)
    }

    /// Raw mode, alternate screen, cursor hidden. Throws if raw mode cannot be set.
    func enter() throws(PagerShellError) {
        do {
            try input.setMode(.raw)
        } catch {
            throw PagerShellError("pagesync: cannot put the terminal in raw mode: \(error)")
        }
        CrashGuard.install()
        CrashGuard.setArmed(true)
        output.write(TerminalControl.enter)
        isEntered = true
    }

    /// Leaves the alternate screen, shows the cursor and restores the terminal's original mode.
    /// Safe to call more than once.
    func leave() {
        guard isEntered else { return }
        isEntered = false
        CrashGuard.setArmed(false)
        output.write(TerminalControl.leave)
        do {
            try input.setMode(.normal)
        } catch {
            TTY.resetMode()
        }
    }

    /// Writes a frame or control string.
    func write(_ text: String) {
        output.write(text)
    }

    /// Starts delivering the bytes typed; `onEnd` runs once if the terminal goes away.
    func startReading(_ onBytes: @escaping (UnsafeRawBufferPointer) -> Void, onEnd: @escaping (String) -> Void) {
        input.startReading { event in
            switch event {
            case .data(let bytes): onBytes(bytes)
            case .eof: onEnd("the terminal closed")
            case .error(let error): onEnd("reading the terminal failed: \(error)")
            }
        }
    }

    /// Closes the TTY handle (after ``leave()``).
    func close() {
        input.close()  // also closes an opened /dev/tty (libuv closes descriptors above 2)
    }
}

/// A failure that ends the pager before or outside the model, with the message for stderr.
struct PagerShellError: Error, CustomStringConvertible {
    /// The one-line message for stderr.
    var description: String
    init(_ description: String) { self.description = description }
}

/// `close(2)`, callable where a `close()` method hides the global function.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
