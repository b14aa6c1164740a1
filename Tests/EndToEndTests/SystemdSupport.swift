import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Helpers for the systemd end-to-end tests: paths, subprocesses, sockets.
enum SystemdE2E {
    /// The package root (this file is Tests/EndToEndTests/SystemdSupport.swift).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built executable `name`: $PAGESYNCD (for pagesyncd), else in ``Binaries/directory``
    /// ($PAGESYNC_BIN_DIR, else next to the test bundle), else .build/debug. Nil when not built.
    static func binary(_ name: String) -> String? {
        var candidates: [String] = []
        if name == "pagesyncd", let override = ProcessInfo.processInfo.environment["PAGESYNCD"] {
            candidates.append(override)
        }
        candidates.append(Binaries.directory.appendingPathComponent(name).path)
        candidates.append(packageRoot.appendingPathComponent(".build/debug/\(name)").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `systemd-socket-activate` (the binary at `activate`) with `arguments`, its standard
    /// input and output discarded. The caller kills it. A ``ChildProcess`` (waitpid), for the
    /// reason ``SystemdDaemonTests/launch(port:environment:in:standardError:)`` gives.
    static func socketActivate(_ activate: String, _ arguments: [String]) throws -> ChildProcess {
        let devNull = try openDevNull()
        defer { close(devNull) }
        return try ChildProcess(executable: activate, arguments: arguments, outputFD: devNull)
    }

    /// /dev/null opened for writing (close-on-exec), for a child's output.
    static func openDevNull() throws -> Int32 {
        let fd = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("open /dev/null: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// `which`: the absolute path of a command in PATH, or nil.
    static func which(_ command: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(command)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a command to completion; output goes through temp files so nothing can block.
    static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                    environment: [String: String]? = nil) throws -> Output {
        let scratch = try temporaryDirectory("run")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        try process.run()
        process.waitUntilExit()
        try out.close(); try err.close()
        return Output(status: process.terminationStatus,
                      stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// A fresh directory under /tmp.
    static func temporaryDirectory(_ tag: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pagesync-\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A free TCP port on 127.0.0.1 (bound to port 0, then released).
    static func freePort() throws -> UInt16 {
        try freeLoopbackPort()
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Connects to 127.0.0.1:port, retrying until `deadline` (the server may still be starting).
    /// Returns the connected socket with a 5 s receive timeout, or nil.
    static func connect(port: UInt16, retryFor seconds: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = loopback(port: port)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if result == 0 {
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                return fd
            }
            close(fd)
            usleep(50_000)
        } while Date() < deadline
        return nil
    }

    /// Reads one LF-terminated line (without the LF) from a socket, or nil on EOF/timeout.
    static func readLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    /// A small form-feed-paged document.
    static func writeDocument(in directory: URL, name: String = "notes.txt") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try "page one\n\u{0C}\npage two\n\u{0C}\npage three\n".write(to: url, atomically: true, encoding: .utf8)
        return url
    }
}

/// An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET.
final class SystemdNotifyListener {
    let fd: Int32
    let path: String
    private let directory: URL

    init() throws {
        directory = try SystemdE2E.temporaryDirectory("notify")
        path = directory.appendingPathComponent("notify").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        try #require(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
    }

    /// The next datagram within `seconds`, or nil.
    func receive(within seconds: Double) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollFD, 1, Int32(max(0, seconds * 1000)))
        guard ready == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Receives until `predicate` matches a datagram or `seconds` pass. Returns everything seen,
    /// the matching datagram last (nil when none matched).
    func receive(until predicate: (String) -> Bool, within seconds: Double) -> (seen: [(time: Date, text: String)], match: String?) {
        let deadline = Date().addingTimeInterval(seconds)
        var seen: [(time: Date, text: String)] = []
        while Date() < deadline {
            guard let message = receive(within: deadline.timeIntervalSinceNow) else { break }
            seen.append((Date(), message))
            if predicate(message) { return (seen, message) }
        }
        return (seen, nil)
    }

    deinit {
        close(fd)
        try? FileManager.default.removeItem(at: directory)
    }
}

extension String {
    /// The `KEY=VALUE` assignments of a notify datagram.
    var notifyAssignments: [String: String] {
        var result: [String: String] = [:]
        for line in split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return result
    }
}
