import Testing
import UV

#if canImport(Glibc)
import Glibc
#endif

/// `TTY` against a real pseudo-terminal: size, raw mode (Ctrl-C arrives as a byte), restoring.
@Suite struct TTYTests {
    /// A pseudo-terminal pair: `main` is the terminal emulator's side, `device` the program's.
    private struct PseudoTerminal {
        let main: Int32
        let device: Int32
        init() throws {
            // posix_openpt/grantpt/unlockpt/ptsname, spelled with Linux ioctls (Glibc does not export them to Swift).
            main = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            // TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned): function-like
            // macros Swift cannot import; these are their values on x86-64 and arm64 Linux.
            let TIOCSPTLCK: UInt = 0x4004_5431
            let TIOCGPTN: UInt = 0x8004_5430
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard main >= 0, ioctl(main, TIOCSPTLCK, &unlock) == 0, ioctl(main, TIOCGPTN, &number) == 0 else {
                throw PTYError(what: "/dev/ptmx")
            }
            device = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard device >= 0 else { throw PTYError(what: "open pty") }
        }
    }
    private struct PTYError: Error { var what: String }

    private static func localFlags(_ fd: Int32) -> tcflag_t {
        var t = termios()
        tcgetattr(fd, &t)
        return t.c_lflag
    }

    @Test func sizeRawModeReadingAndRestoring() throws {
        let pty = try PseudoTerminal()
        defer { close(pty.main) }
        var size = winsize(ws_row: 30, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        #expect(ioctl(pty.main, UInt(TIOCSWINSZ), &size) == 0)
        #expect(Self.localFlags(pty.device) & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))

        let loop = try EventLoop()
        let tty = try TTY(loop: loop, fd: pty.device)
        #expect(tty.windowSize?.columns == 100 && tty.windowSize?.rows == 30)
        try tty.setMode(.raw)
        #expect(Self.localFlags(pty.device) & tcflag_t(ECHO | ICANON | ISIG) == 0)

        var received: [UInt8] = []
        var rawFlags: tcflag_t = 0
        let guardTimer = Timer(loop: loop)  // against hanging, not a timing assertion
        guardTimer.start(afterMilliseconds: 5000) { loop.stop() }
        tty.startReading { event in
            if case .data(let bytes) = event { received += bytes }
            if received.count >= 3 {
                rawFlags = Self.localFlags(pty.device)
                try? tty.setMode(.normal)
                tty.close()
                guardTimer.close()
                loop.stop()
            }
        }
        let typed: [UInt8] = [0x71, 0x03, 0x1A]  // q, Ctrl-C, Ctrl-Z
        #expect(typed.withUnsafeBytes { write(pty.main, $0.baseAddress, $0.count) } == 3)
        loop.run()
        loop.closeAllHandlesAndDrain()

        #expect(received == typed, "Ctrl-C and Ctrl-Z arrive as bytes in raw mode")
        #expect(rawFlags & tcflag_t(ECHO | ICANON | ISIG) == 0)
        #expect(Self.localFlags(pty.device) & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON), "normal mode restored")
        #expect(loop.liveHandleCount == 0)
    }
}
