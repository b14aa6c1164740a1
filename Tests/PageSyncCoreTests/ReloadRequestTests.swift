import Testing
@testable import PageSyncCore

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
        #expect(ReloadRequest.refusal(pid: 7, targetName: "pagesyncd\n", ownName: "pagesyncd\n") == nil)
        #expect(ReloadRequest.refusal(pid: 7, targetName: "pagesyncd", ownName: "pagesyncd\n") == nil)
    }

    @Test func anotherProgramIsNotSignalled() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: "sshd\n", ownName: "pagesyncd\n")
                == "--reload: process 7 is \"sshd\", not pagesyncd; not signalled")
        #expect(ReloadRequest.refusal(pid: 7, targetName: "", ownName: "pagesyncd")
                == "--reload: process 7 is unnamed, not pagesyncd; not signalled")
    }

    @Test func aMissingProcessIsSaidSo() {
        #expect(ReloadRequest.refusal(pid: 7, targetName: nil, ownName: "pagesyncd")
                == "--reload: no process 7 (is pagesyncd running?)")
    }
}
