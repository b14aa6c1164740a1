import Testing
import PageSyncCore

@Suite("ListenFDs: sd_listen_fds semantics")
struct SystemdListenFDsTests {
    let pid: Int32 = 4242

    @Test func noVariablesMeansNoActivation() {
        #expect(ListenFDs.parse(environment: [:], pid: pid) == nil)
        #expect(ListenFDs.check(environment: [:], pid: pid) == .success(nil))
    }

    @Test func oneSocketForUs() throws {
        let fds = try #require(ListenFDs.parse(environment: ["LISTEN_PID": "4242", "LISTEN_FDS": "1"], pid: pid))
        #expect(fds.fds == [3])
        #expect(fds.count == 1)
        #expect(fds.names == nil)
        #expect(fds.entries.map(\.fd) == [3])
        #expect(fds.entries.map(\.name) == [nil])
    }

    @Test func severalSocketsWithNames() throws {
        let env = ["LISTEN_PID": "4242", "LISTEN_FDS": "3", "LISTEN_FDNAMES": "tcp:tcp6:control"]
        let fds = try #require(ListenFDs.parse(environment: env, pid: pid))
        #expect(fds.fds == [3, 4, 5])
        #expect(fds.names == ["tcp", "tcp6", "control"])
        #expect(fds.entries.map(\.name) == ["tcp", "tcp6", "control"])
    }

    @Test func emptyNamesAreKeptInPlace() throws {
        let env = ["LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": ":b"]
        let fds = try #require(ListenFDs.parse(environment: env, pid: pid))
        #expect(fds.names == ["", "b"])
    }

    @Test func wrongPIDIsNotForUs() {
        let env = ["LISTEN_PID": "1", "LISTEN_FDS": "1"]
        #expect(ListenFDs.parse(environment: env, pid: pid) == nil)
        #expect(ListenFDs.check(environment: env, pid: pid) == .success(nil))
    }

    @Test func missingPIDIsNotForUs() {
        #expect(ListenFDs.check(environment: ["LISTEN_FDS": "1"], pid: pid) == .success(nil))
    }

    @Test func missingCountIsNotActivation() {
        #expect(ListenFDs.check(environment: ["LISTEN_PID": "4242"], pid: pid) == .success(nil))
    }

    @Test(arguments: ["", "abc", "-4242", "+4242", " 4242", "4242 ", "0", "99999999999999999999999", "4242x"])
    func garbagePID(_ value: String) {
        let env = ["LISTEN_PID": value, "LISTEN_FDS": "1"]
        #expect(ListenFDs.check(environment: env, pid: pid) == .failure(.invalidPID(value)))
        #expect(ListenFDs.parse(environment: env, pid: pid) == nil)
    }

    @Test(arguments: ["", "0", "-1", "x", "1.5", " 1", "2147483647", "99999999999999999999999"])
    func garbageOrZeroCount(_ value: String) {
        let env = ["LISTEN_PID": "4242", "LISTEN_FDS": value]
        #expect(ListenFDs.check(environment: env, pid: pid) == .failure(.invalidCount(value)))
        #expect(ListenFDs.parse(environment: env, pid: pid) == nil)
    }

    @Test func largestCountThatFits() throws {
        let fds = try #require(ListenFDs.parse(environment: ["LISTEN_PID": "4242", "LISTEN_FDS": "5"], pid: pid))
        #expect(fds.fds.last == 7)
    }

    @Test(arguments: [("a", 2), ("a:b:c", 2), ("", 2), ("a:b:", 2)])
    func namesMismatch(_ names: String, _ count: Int) {
        let env = ["LISTEN_PID": "4242", "LISTEN_FDS": String(count), "LISTEN_FDNAMES": names]
        let given = names.split(separator: ":", omittingEmptySubsequences: false).count
        #expect(ListenFDs.check(environment: env, pid: pid) == .failure(.namesMismatch(names: given, fds: count)))
        #expect(ListenFDs.parse(environment: env, pid: pid) == nil)
    }

    @Test func singleEmptyNameMatchesOneFD() throws {
        let env = ["LISTEN_PID": "4242", "LISTEN_FDS": "1", "LISTEN_FDNAMES": ""]
        let fds = try #require(ListenFDs.parse(environment: env, pid: pid))
        #expect(fds.names == [""])
    }

    @Test func wrongPIDWinsOverGarbageCount() {
        // Variables meant for another process are not ours to judge.
        let env = ["LISTEN_PID": "7", "LISTEN_FDS": "garbage"]
        #expect(ListenFDs.check(environment: env, pid: pid) == .success(nil))
    }

    @Test func problemsDescribeThemselves() {
        #expect(ListenFDs.Problem.invalidPID("x").description == "LISTEN_PID=x is not a process id")
        #expect(ListenFDs.Problem.invalidCount("0").description == "LISTEN_FDS=0 is not a positive descriptor count")
        #expect(ListenFDs.Problem.namesMismatch(names: 1, fds: 2).description == "LISTEN_FDNAMES has 1 names but LISTEN_FDS=2")
    }
}

@Suite("NotifyMessage formatting")
struct SystemdNotifyMessageTests {
    @Test func ready() {
        #expect(NotifyMessage.ready(status: nil).text == "READY=1")
        #expect(NotifyMessage.ready(status: "2 rooms, 0 clients").text == "READY=1\nSTATUS=2 rooms, 0 clients")
    }

    @Test func status() {
        #expect(NotifyMessage.status("serving 1 room").text == "STATUS=serving 1 room")
        #expect(NotifyMessage.status("").text == "STATUS=")
    }

    @Test func watchdogAndStopping() {
        #expect(NotifyMessage.watchdog.text == "WATCHDOG=1")
        #expect(NotifyMessage.stopping.text == "STOPPING=1")
    }

    @Test func reloadingCarriesMonotonicTime() {
        #expect(NotifyMessage.reloading(monotonicMicroseconds: 123_456_789).text
                == "RELOADING=1\nMONOTONIC_USEC=123456789")
    }

    @Test func statusCannotInjectAssignments() {
        let text = NotifyMessage.status("a\nREADY=1\r\u{0}b\tc").text
        #expect(text == "STATUS=a READY=1  b c")
        #expect(!text.dropFirst().contains("\n"))
    }

    @Test func longStatusIsTrimmedOnACharacterBoundary() {
        let long = String(repeating: "é", count: 400) // 800 bytes
        let sanitized = NotifyMessage.sanitizedStatus(long)
        #expect(sanitized.utf8.count == 512)
        #expect(sanitized == String(repeating: "é", count: 256))
    }

    @Test func bytesAreUTF8() {
        #expect(NotifyMessage.watchdog.bytes == Array("WATCHDOG=1".utf8))
    }
}

@Suite("WatchdogConfig from WATCHDOG_USEC / WATCHDOG_PID")
struct SystemdWatchdogConfigTests {
    let pid: Int32 = 99

    @Test func halfTheTimeout() throws {
        let config = try #require(WatchdogConfig.parse(environment: ["WATCHDOG_USEC": "30000000"], pid: pid))
        #expect(config.timeoutMicroseconds == 30_000_000)
        #expect(config.pingIntervalMicroseconds == 15_000_000)
        #expect(config.pingIntervalMilliseconds == 15_000)
    }

    @Test func matchingPID() {
        #expect(WatchdogConfig.parse(environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "99"], pid: pid)
                == WatchdogConfig(timeoutMicroseconds: 1_000_000))
    }

    @Test func otherPIDMeansNotForUs() {
        #expect(WatchdogConfig.parse(environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "98"], pid: pid) == nil)
    }

    @Test(arguments: ["", "0", "-5", "abc", "1e6", " 100", "99999999999999999999999"])
    func garbageTimeout(_ value: String) {
        #expect(WatchdogConfig.parse(environment: ["WATCHDOG_USEC": value], pid: pid) == nil)
    }

    @Test(arguments: ["", "x", "-99", "0"])
    func garbagePID(_ value: String) {
        #expect(WatchdogConfig.parse(environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": value], pid: pid) == nil)
    }

    @Test func missing() {
        #expect(WatchdogConfig.parse(environment: [:], pid: pid) == nil)
        #expect(WatchdogConfig.parse(environment: ["WATCHDOG_PID": "99"], pid: pid) == nil)
    }

    @Test func tinyTimeoutsStayPositive() {
        let one = WatchdogConfig(timeoutMicroseconds: 1)
        #expect(one.pingIntervalMicroseconds == 1)
        #expect(one.pingIntervalMilliseconds == 1)
        #expect(WatchdogConfig(timeoutMicroseconds: 3_000).pingIntervalMilliseconds == 1)
    }
}

@Suite("JournalPriority")
struct SystemdJournalPriorityTests {
    @Test(arguments: [
        ("trace", 7), ("debug", 7), ("info", 6), ("notice", 5),
        ("warning", 4), ("error", 3), ("critical", 2),
    ])
    func mapsSwiftLogLevels(_ level: String, _ priority: Int) throws {
        let mapped = try #require(JournalPriority(logLevelName: level))
        #expect(mapped.rawValue == priority)
        #expect(mapped.prefix == "<\(priority)>")
    }

    @Test func unknownLevel() {
        #expect(JournalPriority(logLevelName: "fatal") == nil)
        #expect(JournalPriority(logLevelName: "INFO") == nil)
    }

    @Test func orderIsBySeverityNumber() {
        #expect(JournalPriority.emergency < JournalPriority.debug)
        #expect(JournalPriority.allCases.map(\.rawValue) == Array(0...7))
    }
}

@Suite("JournalStream")
struct SystemdJournalStreamTests {
    @Test func parses() throws {
        let stream = try #require(JournalStream(parsing: "8:123456"))
        #expect(stream == JournalStream(device: 8, inode: 123_456))
        #expect(stream.matches(device: 8, inode: 123_456))
        #expect(!stream.matches(device: 8, inode: 1))
        #expect(!stream.matches(device: 9, inode: 123_456))
    }

    @Test(arguments: ["", ":", "8", "8:", ":9", "8:9:10", "a:b", "-1:2", "8 :9"])
    func rejectsGarbage(_ text: String) {
        #expect(JournalStream(parsing: text) == nil)
    }
}

@Suite("Status text")
struct SystemdStatusTextTests {
    @Test func pluralization() {
        #expect(NotifyMessage.statusText(rooms: 1, clients: 1) == "1 room, 1 client")
        #expect(NotifyMessage.statusText(rooms: 3, clients: 0) == "3 rooms, 0 clients")
    }
}
