import Foundation
import Testing
import UV

/// A pseudo-terminal pair: the test plays the terminal on `master`, the code under test gets `slave`.
private struct PseudoTerminal {
    let master: Int32
    let slave: Int32

    init() throws {
        // posix_openpt/grantpt/unlockpt/ptsname are not exported by the Glibc module; do what
        // they do on Linux: open the multiplexer, unlock the pair (TIOCSPTLCK), ask its number (TIOCGPTN).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw TestFailure("no pseudo-terminal available")
        }
        slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw TestFailure("cannot open /dev/pts/\(number)") }
    }

    func setSize(columns: UInt16, rows: UInt16) {
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    /// Reads from the terminal side until `count` bytes arrived (or it fails).
    func readFromMaster(count: Int) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while result.count < count {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 10_000) > 0 else { break }
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            result.append(contentsOf: buffer[0..<n])
        }
        return result
    }

    func close() {
        _ = Glibc.close(slave)
        _ = Glibc.close(master)
    }
}

@Suite("TTY")
struct TTYTests {
    @Test func rawModeDeliversKeyBytesAndReportsTheWindowSize() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        pty.setSize(columns: 120, rows: 40)
        try await withRunningLoop { loop in
            let ready: Bool = try await onLoop(loop) {
                TTY.isTerminal(fd: pty.slave)
            }
            #expect(ready)
            let slave = pty.slave
            let master = pty.master
            let (keys, size, modeAfter): ([UInt8], [Int], String) = try await awaitOnLoop(loop) { once in
                let input = try TTY(loop: loop, fd: dup(slave), readable: true)  // the TTY closes its fd
                try input.setMode(.raw)
                let size = input.windowSize.map { [$0.columns, $0.rows] } ?? []
                let received = Box([UInt8]())
                input.startReading { event in
                    switch event {
                    case .data(let bytes):
                        received.value.append(contentsOf: bytes)
                        if received.value.count >= 4 {
                            input.close()  // also puts the terminal back into normal mode
                            var settings = termios()
                            tcgetattr(slave, &settings)
                            let canonical = settings.c_lflag & tcflag_t(ICANON) != 0
                            once.resume(returning: (received.value, size, canonical ? "normal" : "raw"))
                        }
                    case .eof, .error:
                        input.close()
                        once.resume(returning: (received.value, size, "?"))
                    }
                }
                // Ctrl-C and Ctrl-Z arrive as bytes in raw mode (no SIGINT / SIGTSTP).
                let keys: [UInt8] = [0x71, 0x03, 0x1A, 0x1B]
                _ = keys.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            }
            #expect(keys == [0x71, 0x03, 0x1A, 0x1B])
            #expect(size == [120, 40])
            #expect(modeAfter == "normal")
        }
        TTY.resetMode()
    }

    @Test func writesReachTheTerminal() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let slave = pty.slave
        try await withRunningLoop { loop in
            try await onLoop(loop) {
                let output = try TTY(loop: loop, fd: dup(slave), readable: false)
                output.write("hello ")
                output.write(Array("terminal".utf8))
                output.close()
            }
            let text = String(decoding: pty.readFromMaster(count: 14), as: UTF8.self)
            #expect(text == "hello terminal")
        }
        #expect(TTY.writeSynchronously(Array("sync".utf8), fd: pty.slave))
        #expect(String(decoding: pty.readFromMaster(count: 4), as: UTF8.self) == "sync")
    }

    @Test func aRegularFileIsNotATerminal() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("uvtests-tty-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        defer { _ = Glibc.close(fd) }
        #expect(!TTY.isTerminal(fd: fd))
        try await withRunningLoop { loop in
            let error = try await onLoop(loop) { () -> UVError? in
                do throws(UVError) {
                    _ = try TTY(loop: loop, fd: fd, readable: true)
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error == .invalidArgument)
        }
    }
}
