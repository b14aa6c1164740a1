import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// What `exit()` runs in the real pagesyncd.
///
/// libcrypto registers `OPENSSL_cleanup` with `atexit` on first use unless told not to. At a
/// stop, the main task calls `exit()` while the loop thread, which used OpenSSL (the token
/// key's `RAND_bytes`), is still ending and running OpenSSL's thread-local destructor; the
/// two overlapping freed the same memory (`malloc_consolidate(): invalid chunk size`, SIGABRT,
/// seen twice at stops and reproduced by holding the loop thread in gdb until
/// `OPENSSL_cleanup` had freed the thread handler lists). The overlap is too narrow to hit
/// on demand, so this test checks its precondition instead: a `__cxa_atexit` interposer
/// (LD_PRELOAD, built here with the C compiler) logs every exit handler the daemon registers,
/// and `OPENSSL_cleanup` must not be one of them.
@Suite("pagesyncd at exit")
struct ExitCleanupTests {
    static let interposer = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        static void record(const char *name) {
            const char *path = getenv("PAGESYNC_ATEXIT_LOG");
            if (path == NULL) return;
            int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            if (fd < 0) return;
            (void)!write(fd, name, strlen(name));
            (void)!write(fd, "\\n", 1);
            close(fd);
        }
        __attribute__((constructor)) static void loaded(void) { record("(interposer loaded)"); }
        typedef int (*cxa_atexit_fn)(void (*)(void *), void *, void *);
        int __cxa_atexit(void (*func)(void *), void *arg, void *dso) {
            cxa_atexit_fn real = (cxa_atexit_fn)dlsym(RTLD_NEXT, "__cxa_atexit");
            Dl_info info;
            if (dladdr((void *)func, &info) && info.dli_sname != NULL) record(info.dli_sname);
            return real(func, arg, dso);
        }
        """

    @Test func openSSLStateIsNotFreedByExit() throws {
        guard let compiler = SystemdE2E.which("cc") ?? SystemdE2E.which("clang") ?? SystemdE2E.which("gcc") else {
            cannotRunHere(skipped: "no C compiler to build the exit-handler interposer", underCI: "no C compiler to build the exit-handler interposer")
            return
        }
        let binary = try #require(SystemdE2E.binary("pagesyncd"), "pagesyncd is not built")
        let directory = try SystemdE2E.temporaryDirectory("exit-handlers")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("interposer.c")
        try Self.interposer.write(to: source, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("interposer.so")
        let built = try SystemdE2E.run(compiler, ["-shared", "-fPIC", "-o", library.path, source.path, "-ldl"])
        try #require(built.status == 0, "building the interposer failed: \(built.stderr)")

        let document = try SystemdE2E.writeDocument(in: directory)
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let handlers = directory.appendingPathComponent("atexit.log")
        let logURL = directory.appendingPathComponent("stderr.log")
        let logFD = open(logURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(logFD >= 0)
        var environment = ["LD_PRELOAD": library.path, "PAGESYNC_ATEXIT_LOG": handlers.path]
        if ProcessInfo.processInfo.environment["PAGESYNC_SANITIZER"] == "address" {
            // The interposer is loaded ahead of the sanitizer's runtime.
            let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] ?? ""
            environment["ASAN_OPTIONS"] = options.isEmpty ? "verify_asan_link_order=0" : options + ":verify_asan_link_order=0"
        }
        let port = try SystemdE2E.freePort()
        let process = try ChildProcess(
            executable: binary, arguments: ["--listen", "127.0.0.1:\(port)", "--state-dir", state.path, document.path],
            outputFD: logFD, environment: environment,
            unsetting: ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM"])
        close(logFD)
        defer { process.killAndReap() }

        // Serving: the coordinator exists, so OpenSSL has been used (its token key).
        let client = try #require(SystemdE2E.connect(port: port), "daemon did not listen")
        #expect(SystemdE2E.readLine(client)?.hasPrefix("HELLO pagesync/1 ") == true)
        close(client)
        process.send(signal: SIGTERM)
        let ended = SystemdDaemonTests.waitForExit(process, seconds: 10)
        let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        #expect(ended == .exited(0), "log:\n\(log.suffix(2000))")

        let registered = ((try? String(contentsOf: handlers, encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
        print("exit handlers registered by pagesyncd:", registered)
        #expect(registered.contains("(interposer loaded)"), "the interposer was not loaded: \(registered)")
        #expect(!registered.contains("OPENSSL_cleanup"),
                "libcrypto registered OPENSSL_cleanup: exit() frees OpenSSL's state while the loop thread may still be ending")
    }
}
