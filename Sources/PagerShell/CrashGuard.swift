import PageSyncPager
import Synchronization
import UV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last exit path: if the process crashes (a trap, an abort, a bad access) while the
/// terminal is in raw mode on the alternate screen, a signal handler leaves the alternate
/// screen, shows the cursor and restores the terminal's mode, then lets the signal kill the
/// process as it would have (same signal, core dump and all).
///
/// The handler only calls async-signal-safe functions: `write(2)`, `uv_tty_reset_mode`
/// (documented as async-signal-safe) and `raise`.
enum CrashGuard {
    /// Whether the terminal currently needs restoring.
    private static let armed = Atomic<Bool>(false)
    /// ``TerminalControl/leave`` as bytes, made before any handler can run.
    nonisolated(unsafe) private static let leaveBytes: UnsafeMutableBufferPointer<UInt8> = {
        let bytes = Array(TerminalControl.leave.utf8)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = buffer.initialize(from: bytes)
        return buffer
    }()
    private static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]
    private static let installed = Atomic<Bool>(false)

    /// Installs the handlers once (later calls do nothing).
    static func install() {
        guard installed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        _ = leaveBytes.count  // initialize outside signal context
        #if os(Linux)
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                if CrashGuard.armed.exchange(false, ordering: .relaxed) {
                    _ = write(STDOUT_FILENO, CrashGuard.leaveBytes.baseAddress, CrashGuard.leaveBytes.count)
                    TTY.resetMode()
                }
                raise(signal)  // SA_RESETHAND: the default action now
            }
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND)) | Int32(SA_NODEFER)
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
        #endif
    }

    /// Marks whether the terminal is entered (raw mode, alternate screen).
    static func setArmed(_ value: Bool) {
        armed.store(value, ordering: .relaxed)
    }
}
