import Foundation
import Testing

/// README's "Monitoring" drop-ins: `--metrics-listen` added to pagesyncd.service's ExecStart,
/// and the host's network back for loopback in pagesyncd-socket.service. The units with them
/// still verify; the first keeps the service's exposure score.
@Suite("systemd drop-ins for the metrics listener")
struct SystemdMetricsDropInTests {
    /// The ```ini block after `anchor` in README.md.
    static func block(after anchor: String) throws -> String {
        let readme = try String(contentsOf: SystemdE2E.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let found = try #require(readme.range(of: anchor), "README lost the drop-in after \"\(anchor)\"")
        let rest = readme[found.upperBound...]
        let open = try #require(rest.range(of: "```ini\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    static func standalone() throws -> String { try block(after: "which keeps the config as shipped:") }
    static func socketActivated() throws -> String { try block(after: "at the price of a wider sandbox") }

    @Test func theStandaloneDropInIsTheUnitsExecStartWithMetricsListen() throws {
        let unit = try SystemdUnitFileTests.unitText("pagesyncd.service")
        let shipped = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let dropIn = try Self.standalone().split(separator: "\n")
        #expect(dropIn == ["[Service]", "ExecStart=", "\(shipped) --metrics-listen 127.0.0.1:7779"])
        let socketDropIn = try Self.socketActivated()
        #expect(socketDropIn.contains("PrivateNetwork=no\n"))
        #expect(socketDropIn.contains("IPAddressAllow=localhost\n"))
    }

    @Test func theUnitsVerifyWithThem() throws {
        guard let analyze = SystemdE2E.which("systemd-analyze") else {
            cannotRunHere(skipped: "systemd-analyze is not installed; the metrics drop-ins not checked",
                          underCI: "systemd-analyze is not installed (scripts/test installs systemd)")
            return
        }
        let binary = SystemdE2E.binary("pagesyncd") ?? "/bin/true"
        let plain = try SystemdRedisDropInTests.units(withDropIn: false)
        let directory = try SystemdRedisDropInTests.units(withDropIn: false)
        defer {
            try? FileManager.default.removeItem(at: plain)
            try? FileManager.default.removeItem(at: directory)
        }
        for (service, text) in [("pagesyncd.service", try Self.standalone()), ("pagesyncd-socket.service", try Self.socketActivated())] {
            let dir = directory.appendingPathComponent("\(service).d")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try text.replacingOccurrences(of: "/usr/local/bin/pagesyncd", with: binary)
                .write(to: dir.appendingPathComponent("metrics.conf"), atomically: true, encoding: .utf8)
        }
        let verify = try SystemdE2E.run(analyze, ["verify", "--man=no"] + SystemdUnitFileTests.units.map { directory.appendingPathComponent($0).path })
        #expect(verify.status == 0 && verify.stdout.isEmpty && verify.stderr.isEmpty,
                "systemd-analyze verify with the drop-ins:\n\(verify.stdout)\(verify.stderr)")
        let before = try SystemdRedisDropInTests.exposure(analyze, plain.appendingPathComponent("pagesyncd.service").path)
        let after = try SystemdRedisDropInTests.exposure(analyze, directory.appendingPathComponent("pagesyncd.service").path)
        #expect(!after.isEmpty && after == before, "pagesyncd.service: \(before) -> \(after)")
        let socketBefore = try SystemdRedisDropInTests.exposure(analyze, plain.appendingPathComponent("pagesyncd-socket.service").path)
        let socketAfter = try SystemdRedisDropInTests.exposure(analyze, directory.appendingPathComponent("pagesyncd-socket.service").path)
        print("pagesyncd-socket.service: exposure \(socketBefore) without the metrics drop-in, \(socketAfter) with it")
    }
}
