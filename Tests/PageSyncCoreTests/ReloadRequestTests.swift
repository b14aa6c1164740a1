import Testing
import PageSyncCore

@Suite("ReloadRequest: pagesyncd --reload PID")
struct ReloadRequestTests {
    @Test func aPidIsParsed() {
        #expect(ReloadRequest.pid(from: "4242") == .success(4242))
    }

    @Test func anEmptyMainPIDSaysTheServiceIsNotRunning() {
        guard case .failure(let error) = ReloadRequest.pid(from: "") else { Issue.record("accepted \"\""); return }
        #expect(error.message == "--reload: no process id given (is the service running? $MAINPID was empty)")
    }

    @Test(arguments: ["abc", "-5", "+5", "0", "1", "12 ", "99999999999"])
    func notAPid(_ text: String) {
        guard case .failure(let error) = ReloadRequest.pid(from: text) else { Issue.record("accepted \(text)"); return }
        #expect(error.message == "--reload: \"\(text)\" is not the process id of a running pagesyncd")
    }

    @Test func theSameProgramMayBeSignalled() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: "pagesyncd\n", signalable: true, ownName: "pagesyncd\n") == nil)
        #expect(ReloadRequest.refusal(pid: 7, targetName: "pagesyncd", signalable: true, ownName: "pagesyncd\n") == nil)
    }

    @Test func anotherProgramIsNotSignalledEvenIfItMayBe() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: "sshd\n", signalable: true, ownName: "pagesyncd\n")
                == "--reload: process 7 is \"sshd\", not pagesyncd; not signalled")
        #expect(ReloadRequest.refusal(pid: 7, targetName: "", signalable: true, ownName: "pagesyncd")
                == "--reload: process 7 is unnamed, not pagesyncd; not signalled")
    }

    /// ExecReload= under ProtectProc=invisible and PrivateUsers=yes: /proc hides the main process,
    /// but the same dynamic user may signal it (seen under systemd 252 in systemd-nspawn).
    @Test func anInvisibleProcessThisUserMaySignalIsSignalled() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: nil, signalable: true, ownName: "pagesyncd") == nil)
    }

    @Test func aMissingProcessIsSaidSo() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: nil, signalable: false, ownName: "pagesyncd")
                == "--reload: no process 7 that this user may signal (is pagesyncd running?)")
    }
}
