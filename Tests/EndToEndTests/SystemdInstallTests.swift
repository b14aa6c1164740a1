import Foundation
import Testing

/// `make install DESTDIR=...` installs the expected tree, with static binaries.
///
/// `swift test` holds the lock on .build for the whole run, so this test cannot build there:
/// - if `make build man` already ran (release binaries and man pages exist in .build), it installs
///   those with NO_BUILD=1 NO_MAN=1 (seconds);
/// - else, with PAGESYNC_INSTALL_TEST=full, it runs the whole `make install` in a separate scratch
///   directory (a full debug + release build: minutes);
/// - else it is skipped, saying so.
@Suite("make install")
struct SystemdInstallTests {
    static let expectedFiles = [
        "usr/local/bin/pagesyncd",
        "usr/local/bin/pagesync",
        "usr/local/lib/systemd/system/pagesyncd.service",
        "usr/local/lib/systemd/system/pagesyncd-socket.service",
        "usr/local/lib/systemd/system/pagesyncd.socket",
        "usr/local/lib/systemd/system/pagesyncd-tls.socket",
        "usr/local/lib/systemd/system/pagesyncd-web.socket",
        "usr/local/share/man/man8/pagesyncd.8",
        "usr/local/share/man/man1/pagesync.1",
        "etc/pagesync/pagesyncd.yaml",
    ]

    /// Shared libraries a static-stdlib binary may still need: Debian's libuv, OpenSSL, hiredis,
    /// libyaml (the config file), cmark-gfm (the pager's markdown), http-parser and wslay (the HTTP
    /// listeners and WebSockets), and the C/C++ runtime.
    /// Nothing else, and no Swift runtime library.
    static let allowedLibraries = ["linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so",
                                   "librt.so", "libutil.so", "libstdc++.so", "libgcc_s.so", "libuv.so",
                                   "libssl.so", "libcrypto.so", "libhiredis.so", "libyaml-0.so",
                                   "libcmark-gfm.so", "libcmark-gfm-extensions.so", "libhttp_parser.so", "libwslay.so"]

    @Test func installsTheExpectedTree() throws {
        // scripts/test (the CI command) installs make and runs `make build man` first,
        // so under CI a missing piece is a failure, not a skip.
        let underCI = ProcessInfo.processInfo.environment["CI"] != nil
        guard let make = SystemdE2E.which("make") else {
            if underCI { Issue.record("make is not installed") }
            print("SKIPPED: make is not installed")
            return
        }
        let root = SystemdE2E.packageRoot
        let releaseBin = root.appendingPathComponent(".build/release")
        let prebuilt = FileManager.default.fileExists(atPath: releaseBin.appendingPathComponent("pagesyncd").path)
            && FileManager.default.fileExists(atPath: releaseBin.appendingPathComponent("pagesync").path)
            && FileManager.default.fileExists(atPath: root.appendingPathComponent(".build/man/pagesyncd.8").path)
            && FileManager.default.fileExists(atPath: root.appendingPathComponent(".build/man/pagesync.1").path)
        let full = ProcessInfo.processInfo.environment["PAGESYNC_INSTALL_TEST"] == "full"
        guard prebuilt || full else {
            if underCI { Issue.record("no release build or man pages: scripts/test runs `make build man` before the tests") }
            print("SKIPPED: make install test: run `make build man` first, or set PAGESYNC_INSTALL_TEST=full (builds in a separate scratch dir, several minutes)")
            return
        }
        let destdir = try SystemdE2E.temporaryDirectory("destdir")
        defer { try? FileManager.default.removeItem(at: destdir) }
        var arguments = ["install", "DESTDIR=\(destdir.path)"]
        var scratch: URL? = nil
        if prebuilt {
            arguments += ["NO_BUILD=1", "NO_MAN=1"]
        } else {
            scratch = try SystemdE2E.temporaryDirectory("scratch")
            arguments.append("SCRATCH=\(scratch!.path)")
        }
        defer { if let scratch { try? FileManager.default.removeItem(at: scratch) } }
        let started = Date()
        let result = try SystemdE2E.run(make, arguments, in: root)
        print("make \(arguments.joined(separator: " ")) took \(Int(Date().timeIntervalSince(started))) s")
        try #require(result.status == 0, "make install failed:\n\(result.stdout)\n\(result.stderr)")

        for file in Self.expectedFiles {
            #expect(FileManager.default.fileExists(atPath: destdir.appendingPathComponent(file).path), "missing \(file)")
        }
        for program in ["pagesyncd", "pagesync"] {
            let path = destdir.appendingPathComponent("usr/local/bin/\(program)").path
            #expect(FileManager.default.isExecutableFile(atPath: path))
            // Installed stripped: smaller than the binary it came from, which keeps its symbols.
            if prebuilt {
                let built = try FileManager.default.attributesOfItem(atPath: releaseBin.appendingPathComponent(program).path)[.size] as? Int ?? 0
                let installed = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
                print("\(program): built \(built) bytes, installed \(installed) bytes")
                #expect(installed > 0 && installed < built, "\(program) was not stripped: \(installed) of \(built) bytes")
            }
            if let ldd = SystemdE2E.which("ldd") {
                let libraries = try SystemdE2E.run(ldd, [path]).stdout
                print("ldd \(program):\n\(libraries)")
                #expect(!libraries.contains("libswift"), "\(program) links shared Swift libraries")
                #expect(libraries.contains("libuv.so"))
                for line in libraries.split(separator: "\n") {
                    let name = line.trimmingCharacters(in: .whitespaces)
                    #expect(Self.allowedLibraries.contains { name.hasPrefix($0) || name.hasPrefix("/lib64/\($0)") },
                            "\(program) needs an unexpected library: \(name)")
                }
            }
        }
        let daemonPage = try String(contentsOf: destdir.appendingPathComponent("usr/local/share/man/man8/pagesyncd.8"), encoding: .utf8)
        #expect(daemonPage.contains(".Dt PAGESYNCD 8"))
        let pagerPage = try String(contentsOf: destdir.appendingPathComponent("usr/local/share/man/man1/pagesync.1"), encoding: .utf8)
        #expect(pagerPage.contains(".Dt PAGESYNC 1"))
        let unit = try String(contentsOf: destdir.appendingPathComponent("usr/local/lib/systemd/system/pagesyncd.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/pagesyncd --config /etc/pagesync/pagesyncd.yaml"))

        // uninstall removes everything but directories.
        let uninstall = try SystemdE2E.run(make, ["uninstall", "DESTDIR=\(destdir.path)"], in: root)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        let left = FileManager.default.enumerator(atPath: destdir.path)?.compactMap { $0 as? String }
            .filter { (try? destdir.appendingPathComponent($0).resourceValues(forKeys: [.isDirectoryKey]).isDirectory) != true } ?? []
        #expect(left.isEmpty, "uninstall left files: \(left)")
    }
}
