import Foundation
import Testing

/// `systemd-analyze verify` and `security` on the shipped units.
@Suite("systemd unit files")
struct SystemdUnitFileTests {
    static let units = ["pagesyncd.service", "pagesyncd-socket.service", "pagesyncd.socket", "pagesyncd-tls.socket", "pagesyncd-web.socket"]
    static let services = ["pagesyncd.service", "pagesyncd-socket.service"]

    static func unitText(_ name: String) throws -> String {
        try String(contentsOf: SystemdE2E.packageRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
    }

    /// Non-comment `Key=Value` lines of one section.
    static func assignments(_ text: String, section: String) -> [String] {
        var current = ""
        var result: [String] = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") { current = line; continue }
            if current == "[\(section)]" { result.append(line) }
        }
        return result
    }

    @Test func execStartMatchesTheMakefileDefaults() throws {
        for service in Self.services {
            let lines = Self.assignments(try Self.unitText(service), section: "Service")
            #expect(lines.contains("ExecStart=/usr/local/bin/pagesyncd --config /etc/pagesync/pagesyncd.yaml"), "\(service)")
            #expect(lines.contains("Type=notify"), "\(service)")
            // No /bin/kill: a minimal Debian has none without procps.
            #expect(lines.contains("ExecReload=/usr/local/bin/pagesyncd --reload $MAINPID"), "\(service)")
            #expect(lines.contains("LoadCredential=pagesync:/etc/pagesync/credentials"), "\(service)")
            #expect(lines.contains { $0.hasPrefix("WatchdogSec=") }, "\(service)")
            #expect(lines.contains("Restart=on-failure"), "\(service)")
            #expect(lines.contains("DynamicUser=yes"), "\(service)")
            #expect(lines.contains("StateDirectory=pagesync"), "\(service)")
            #expect(lines.contains("ConfigurationDirectory=pagesync"), "\(service)")
        }
        let socket = Self.assignments(try Self.unitText("pagesyncd.socket"), section: "Socket")
        #expect(socket.contains("ListenStream=127.0.0.1:7777"))
        #expect(socket.contains("Service=pagesyncd-socket.service"))
        #expect(socket.contains("FileDescriptorName=pagesync"))
        // The TLS port: the same service, its socket named as the daemon expects.
        let tlsSocket = Self.assignments(try Self.unitText("pagesyncd-tls.socket"), section: "Socket")
        #expect(tlsSocket.contains("ListenStream=127.0.0.1:7778"))
        #expect(tlsSocket.contains("FileDescriptorName=pagesync-tls"))
        #expect(tlsSocket.contains("Service=pagesyncd-socket.service"))
        #expect(tlsSocket.contains("IPAddressAllow=localhost"))
        // The follower page: the same service, its socket named as the daemon expects.
        let webSocket = Self.assignments(try Self.unitText("pagesyncd-web.socket"), section: "Socket")
        #expect(webSocket.contains("ListenStream=127.0.0.1:8080"))
        #expect(webSocket.contains("FileDescriptorName=pagesync-web"))
        #expect(webSocket.contains("Service=pagesyncd-socket.service"))
        #expect(webSocket.contains("IPAddressAllow=localhost"))
    }

    /// The socket-activated service is the standalone one plus a private network: no drift.
    @Test func socketServiceDiffersOnlyInNetworking() throws {
        let standalone = Set(Self.assignments(try Self.unitText("pagesyncd.service"), section: "Service"))
        let activated = Set(Self.assignments(try Self.unitText("pagesyncd-socket.service"), section: "Service"))
        #expect(standalone.subtracting(activated) == [
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "IPAddressAllow=localhost",
        ])
        #expect(activated.subtracting(standalone) == ["PrivateNetwork=yes", "RestrictAddressFamilies=AF_UNIX"])
        let activatedUnit = Set(Self.assignments(try Self.unitText("pagesyncd-socket.service"), section: "Unit"))
        #expect(activatedUnit.isSuperset(of: ["Requires=pagesyncd.socket", "After=pagesyncd.socket", "After=pagesyncd-tls.socket", "After=pagesyncd-web.socket"]))
        #expect(!activatedUnit.contains { $0.contains("pagesyncd-web.socket") && !$0.hasPrefix("After=") },
                "the web socket is only ordered, never pulled in")
        #expect(!activatedUnit.contains { $0.contains("pagesyncd-tls.socket") && !$0.hasPrefix("After=") },
                "the TLS socket is only ordered, never pulled in: it needs tls: configured")
    }

    /// Copies of the units whose ExecStart names an existing binary, as verify requires.
    static func verifiableCopies() throws -> URL {
        let directory = try SystemdE2E.temporaryDirectory("units")
        let binary = SystemdE2E.binary("pagesyncd") ?? "/bin/true"
        for unit in units {
            let text = try unitText(unit).replacingOccurrences(of: "/usr/local/bin/pagesyncd", with: binary)
            try text.write(to: directory.appendingPathComponent(unit), atomically: true, encoding: .utf8)
        }
        return directory
    }

    @Test func verifyIsClean() throws {
        guard let analyze = SystemdE2E.which("systemd-analyze") else {
            cannotRunHere(skipped: "systemd-analyze is not installed; unit files not verified", underCI: "systemd-analyze is not installed (scripts/test installs systemd)")
            return
        }
        let directory = try Self.verifiableCopies()
        defer { try? FileManager.default.removeItem(at: directory) }
        // --man=no: the man pages are checked by the install test, not installed here.
        let result = try SystemdE2E.run(analyze, ["verify", "--man=no"] + Self.units.map { directory.appendingPathComponent($0).path })
        #expect(result.status == 0, "systemd-analyze verify failed:\n\(result.stdout)\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "systemd-analyze verify complained:\n\(result.stdout)\(result.stderr)")
    }

    @Test(arguments: SystemdUnitFileTests.services)
    func exposureIsAtMostOne(_ service: String) throws {
        guard let analyze = SystemdE2E.which("systemd-analyze") else {
            cannotRunHere(skipped: "systemd-analyze is not installed; exposure not checked", underCI: "systemd-analyze is not installed (scripts/test installs systemd)")
            return
        }
        let path = SystemdE2E.packageRoot.appendingPathComponent("systemd/\(service)").path
        let result = try SystemdE2E.run(analyze, ["security", "--offline=true", "--no-pager", path])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
                                "no score line in:\n\(result.stdout)\(result.stderr)")
        print(line)
        // "→ Overall exposure level for pagesyncd.service: 0.9 SAFE 😀"
        let afterColon = try #require(line.split(separator: ":").last)
        let score = try #require(afterColon.split(separator: " ").first.flatMap { Double($0) }, "cannot parse: \(line)")
        #expect(score <= 1.0, "\(line)")
    }
}
