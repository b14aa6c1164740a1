import Foundation
import Testing
import UV

@Suite("Handles")
struct HandleTests {
    @Test func oneShotTimerFiresOnce() async throws {
        try await withRunningLoop { loop in
            let fired: Bool = try await awaitOnLoop(loop) { once in
                let timer = UV.Timer(loop: loop)
                timer.start(afterMilliseconds: 1) {
                    #expect(!timer.isActive)
                    timer.close()
                    timer.close()  // idempotent
                    once.resume(returning: true)
                }
                #expect(timer.isActive)
            }
            #expect(fired)
        }
    }

    @Test func repeatingTimerStopsWhenStopped() async throws {
        try await withRunningLoop { loop in
            let count: Int = try await awaitOnLoop(loop) { once in
                let ticks = Box(0)
                let timer = UV.Timer(loop: loop)
                timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
                    ticks.value += 1
                    if ticks.value == 3 {
                        timer.stop()
                        // Give a stopped timer plenty of chances to fire again (it must not).
                        let later = UV.Timer(loop: loop)
                        later.start(afterMilliseconds: 30) {
                            later.close()
                            timer.close()
                            once.resume(returning: ticks.value)
                        }
                    }
                }
            }
            #expect(count == 3)
        }
    }

    @Test func signalWatcherReceivesRaisedSignal() async throws {
        try await withRunningLoop { loop in
            let received: Bool = try await awaitOnLoop(loop) { once in
                let watcher = try SignalWatcher(loop: loop, signal: SIGUSR1) {
                    once.resume(returning: true)
                }
                #expect(watcher.keepsLoopAlive)
                // The test runner's threads (this one included) block SIGUSR1, and raise() targets
                // the calling thread: unblock it here, as a normal process would have it.
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGUSR1)
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                raise(SIGUSR1)
            }
            #expect(received)
        }
    }

    @Test func invalidSignalThrows() async throws {
        try await withRunningLoop { loop in
            let error = try await onLoop(loop) { () -> UVError? in
                do throws(UVError) {
                    _ = try SignalWatcher(loop: loop, signal: 12_345) {}
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error == .invalidArgument)
        }
    }

    @Test func prepareHookRunsEachIteration() async throws {
        try await withRunningLoop { loop in
            let runs: Int = try await awaitOnLoop(loop) { once in
                let runs = Box(0)
                let hook = PrepareHook(loop: loop) {
                    runs.value += 1
                    if runs.value == 3 { once.resume(returning: runs.value) }
                }
                // Wake the loop a few times so it iterates.
                let timer = UV.Timer(loop: loop)
                timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
                    if runs.value >= 3 {
                        timer.close()
                        hook.close()
                    }
                }
            }
            #expect(runs == 3)
        }
    }

    @Test func fileWatcherSeesAWrite() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("uvtests-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("notes.txt")
        try Data("page 1\n".utf8).write(to: file)

        try await withRunningLoop { loop in
            let name: String? = try await awaitOnLoop(loop) { once in
                let watcher = try FileWatcher(loop: loop, path: file.path) { filename in
                    once.resume(returning: filename)
                }
                _ = watcher
                let handle = try FileHandle(forWritingTo: file)
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("\u{0C}page 2\n".utf8))
                try handle.close()
            }
            #expect(name == "notes.txt")
        }
    }

    @Test func fileWatcherOnMissingPathThrows() async throws {
        try await withRunningLoop { loop in
            let error = try await onLoop(loop) { () -> UVError? in
                do throws(UVError) {
                    _ = try FileWatcher(loop: loop, path: "/nonexistent/pagesync/\(UUID().uuidString)") { _ in }
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error?.name == "ENOENT")
        }
    }

    @Test func errorsHaveNames() {
        #expect(UVError.brokenPipe.name == "EPIPE")
        #expect(UVError.connectionReset.description.hasPrefix("ECONNRESET: "))
    }

    /// In a child process (the counters are process-wide and other suites run in parallel):
    /// a loop run on the calling thread with a listener, connections, timers, a signal watcher,
    /// a prepare hook and queued writes frees every handle and request after closing.
    @Test func everythingIsFreedAfterClosing() async {
        await #expect(processExitsWith: .success) {
            let handlesBefore = UVHandles.liveCount
            let requestsBefore = UVHandles.liveRequestCount
            let loop = try EventLoop()
            let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0)
            let port = listener.localAddress!.port
            try listener.listen { server in
                server.write([UInt8](repeating: 7, count: 8 * 1024 * 1024))  // stays queued
                server.startReading { _ in }
            }
            TCPConnection.connect(loop: loop, host: "127.0.0.1", port: port) { result in
                guard case .success(let client) = result else { exit(2) }
                client.write([1, 2, 3])
                let stopper = UV.Timer(loop: loop)
                stopper.start(afterMilliseconds: 20) { loop.stop() }
            }
            _ = try SignalWatcher(loop: loop, signal: SIGUSR2) {}
            _ = PrepareHook(loop: loop) {}
            UV.Timer(loop: loop).start(afterMilliseconds: 1, repeatMilliseconds: 1) {}
            loop.run()
            #expect(UVHandles.liveCount > handlesBefore)
            loop.closeAllHandlesAndDrain()
            guard UVHandles.liveCount == handlesBefore, UVHandles.liveRequestCount == requestsBefore,
                  loop.liveHandleCount == 0 else { exit(3) }
        }
    }
}
