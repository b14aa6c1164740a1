import Foundation
import Testing

/// README's "Several daemons" systemd drop-in (After=/Wants=redis-server.service): the units
/// with it still verify cleanly and keep their exposure score.
@Suite("systemd drop-in for Redis")
struct SystemdRedisDropInTests {
    /// The ```ini block that follows "order the daemon after Redis" in README.md.
    static func dropIn() throws -> String {
        let readme = try String(contentsOf: SystemdE2E.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let anchor = try #require(readme.range(of: "order the daemon after Redis"), "README lost its Redis drop-in")
        let rest = readme[anchor.upperBound...]
        let open = try #require(rest.range(of: "```ini\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// The shipped units (ExecStart pointing at a binary that exists), each service with
    /// README's drop-in in `<unit>.d/redis.conf` when `withDropIn`.
    static func units(withDropIn: Bool) throws -> URL {
        let directory = try SystemdE2E.temporaryDirectory(withDropIn ? "dropin" : "plain")
        let binary = SystemdE2E.binary("pagesyncd") ?? "/bin/true"
        for unit in SystemdUnitFileTests.units {
            let text = try SystemdUnitFileTests.unitText(unit).replacingOccurrences(of: "/usr/local/bin/pagesyncd", with: binary)
            try text.write(to: directory.appendingPathComponent(unit), atomically: true, encoding: .utf8)
        }
        if withDropIn {
            for service in SystemdUnitFileTests.services {
                let dir = directory.appendingPathComponent("\(service).d")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                try dropIn().write(to: dir.appendingPathComponent("redis.conf"), atomically: true, encoding: .utf8)
            }
        }
        return directory
    }

    static func exposure(_ analyze: String, _ path: String) throws -> String {
        let result = try SystemdE2E.run(analyze, ["security", "--offline=true", "--no-pager", path])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
                                "no score line in:\n\(result.stdout)\(result.stderr)")
        return String(try #require(line.split(separator: ":").last).split(separator: " ").first ?? "")
    }

    @Test func theDropInNamesRedis() throws {
        let text = try Self.dropIn()
        #expect(text.contains("[Unit]\n"))
        #expect(text.contains("After=redis-server.service\n"))
        #expect(text.contains("Wants=redis-server.service\n"))
    }

    @Test func verifiesAndKeepsTheExposureScore() throws {
        guard let analyze = SystemdE2E.which("systemd-analyze") else {
            cannotRunHere(skipped: "systemd-analyze is not installed; the Redis drop-in not checked", underCI: "systemd-analyze is not installed (scripts/test installs systemd)")
            return
        }
        let plain = try Self.units(withDropIn: false)
        let dropIn = try Self.units(withDropIn: true)
        defer {
            try? FileManager.default.removeItem(at: plain)
            try? FileManager.default.removeItem(at: dropIn)
        }
        let verify = try SystemdE2E.run(analyze, ["verify", "--man=no"] + SystemdUnitFileTests.units.map { dropIn.appendingPathComponent($0).path })
        #expect(verify.status == 0 && verify.stdout.isEmpty && verify.stderr.isEmpty,
                "systemd-analyze verify with the drop-in:\n\(verify.stdout)\(verify.stderr)")
        for service in SystemdUnitFileTests.services {
            let without = try Self.exposure(analyze, plain.appendingPathComponent(service).path)
            let with = try Self.exposure(analyze, dropIn.appendingPathComponent(service).path)
            print("\(service): exposure \(without) without the Redis drop-in, \(with) with it")
            #expect(!with.isEmpty && with == without, "\(service): \(without) -> \(with)")
        }
    }
}
