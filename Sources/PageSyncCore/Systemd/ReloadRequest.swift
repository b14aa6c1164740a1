/// `pagesyncd --reload PID`: the decisions behind `ExecReload=` without `/bin/kill` (a minimal
/// Debian has none without procps). Pure; the caller reads `/proc/PID/comm` and sends SIGHUP.
public enum ReloadRequest {
    /// The process id in `text` (systemd's `$MAINPID`), or a one-line reason it is not one.
    /// An empty `text` is the usual cause: `$MAINPID` is empty when the service is not running.
    public static func pid(from text: String) -> Result<Int32, ConfigError> {
        guard !text.isEmpty else {
            return .failure(ConfigError("--reload: no process id given (is the service running? $MAINPID was empty)"))
        }
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let pid = Int32(text), pid > 1 else {
            return .failure(ConfigError("--reload: \"\(text)\" is not the process id of a running pagesyncd"))
        }
        return .success(pid)
    }

    /// Nil when the process `pid` may be sent SIGHUP by a program whose own name is `ownName`;
    /// otherwise a one-line reason. `targetName` is its `/proc/PID/comm` (nil when not visible),
    /// `signalable` whether `kill(pid, 0)` succeeds.
    ///
    /// A visible process must have this program's name, so a stale or mistyped pid never hangs
    /// up some other program. An invisible one is signalled when it may be: under the units'
    /// `ProtectProc=invisible` with `PrivateUsers=yes`, `ExecReload=` runs in a user namespace of
    /// its own and cannot see the main process in /proc, yet it may signal it because it runs as
    /// the same (dynamic) user, which no other program uses.
    public static func refusal(pid: Int32, targetName: String?, signalable: Bool, ownName: String) -> String? {
        guard let targetName else {
            return signalable ? nil : "--reload: no process \(pid) that this user may signal (is pagesyncd running?)"
        }
        let target = targetName.trimmingTrailingNewlines()
        let own = ownName.trimmingTrailingNewlines()
        guard target == own else {
            return "--reload: process \(pid) is \(target.isEmpty ? "unnamed" : "\"\(target)\""), not \(own); not signalled"
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while text.last == "\n" { text = text.dropLast() }
        return String(text)
    }
}
