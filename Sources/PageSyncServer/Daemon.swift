#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import PageSyncCore
import UV

/// Runs pagesyncd: a libuv loop on the calling thread with the
/// ``Coordinator`` as its actor, until SIGINT or SIGTERM.
public enum Daemon {
    /// Starts the daemon and blocks until it has shut down.
    /// - Parameters:
    ///   - listenFDs: sockets handed over by a service manager; when non-empty
    ///     they are used instead of binding `config.listen`.
    ///   - tlsListenFDs: sockets named `pagesync-tls` by the service manager: TLS listeners
    ///     (with `config.tls`; with socket activation `tls.listen` is not bound).
    ///   - webListenFDs: sockets named `pagesync-web`: the web listener's (the follower page),
    ///     in place of `config.webListen`.
    ///   - reloadConfig: reads the configuration again, on SIGHUP.
    /// - Throws: ``StartError`` when it cannot start (a document, the state
    ///   directory or the address), with a one-line message.
    public static func run(
        config: ServerConfig,
        logger: Logger,
        observer: any LifecycleObserver = NoLifecycleObserver(),
        listenFDs: [Int32] = [],
        tlsListenFDs: [Int32] = [],
        webListenFDs: [Int32] = [],
        reloadConfig: @escaping @Sendable () async throws -> ServerConfig
    ) throws(StartError) {
        // Before anything uses OpenSSL (the coordinator's token key does): exit() must not
        // free OpenSSL's state while this thread, which used it, is still ending.
        OpenSSLLifetime.keepUntilExit()
        // A peer that vanishes mid-write must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        raiseOpenFileLimit(logger: logger)

        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            throw StartError("cannot create the event loop: \(error)")
        }
        // TLS as configured, before the state is touched: a bad certificate or key is then the
        // only line the daemon prints.
        let tlsContext = try config.tls.map { tls throws(StartError) in try Coordinator.startingTLSContext(tls) }
        // The state is read back before the loop runs: blocking reads are harmless here.
        let engine: any StateEngine
        if let url = config.redis {
            engine = RedisEngine(loop: loop, url: url, prefix: config.redisPrefix, roomNames: config.rooms.map(\.name), logger: logger)
        } else {
            engine = JournalEngine(loop: loop, directory: config.stateDirectory, durability: config.durability, logger: logger)
        }
        let loaded: LoadedState
        do {
            loaded = try engine.load()
        } catch {
            throw StartError(config.redis == nil ? "state directory \(config.stateDirectory): \(error)" : "state engine: redis \(error)")
        }
        let coordinator = Coordinator(
            loop: loop, config: config, logger: logger, engine: engine, loaded: loaded,
            observer: observer, listenFDs: listenFDs, tlsListenFDs: tlsListenFDs, webListenFDs: webListenFDs, tlsContext: tlsContext,
            reloadConfig: reloadConfig)
        // start() runs as the loop's first job, on the loop thread; a failure stops the loop.
        let failure = Mutex<StartError?>(nil)
        loop.execute {
            let started = coordinator.assumeIsolated { coordinator in
                Result { () throws(StartError) in try coordinator.start() }
            }
            if case .failure(let error) = started {
                failure.withLock { $0 = error }
                loop.stop()
            }
        }
        loop.run()
        loop.closeAllHandlesAndDrain()
        // Every disk job has finished (draining waits for them): record a clean stop.
        engine.closeCleanly()
        if let error = failure.withLock({ $0 }) { throw error }
        logger.info("stopped")
    }

    /// Every client costs a descriptor: use all the hard limit allows.
    private static func raiseOpenFileLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            logger.warning("cannot raise the open-file limit: \(String(cString: strerror(errno)))")
        }
    }
}

// Glibc's module does not export pthread_setname_np (a _GNU_SOURCE function); declared here.
@_silgen_name("pthread_setname_np") private func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32

/// A plain thread for the event loop: libuv blocks in `uv_run`, which must not
/// happen on the main actor or on a thread of Swift's cooperative pool.
///
/// It runs at the process's priority. On Linux the nice value belongs to each thread and a new
/// thread inherits its creator's; a thread of Swift's pool is a libdispatch worker whose nice
/// follows its QoS (0), not the process's (`nice -n`, systemd `Nice=`). So the loop thread
/// takes the main thread's nice value when it starts. (A process without `CAP_SYS_NICE` or a
/// high enough `RLIMIT_NICE` may not lower a thread's nice value: there the thread keeps its
/// creator's.) It is named `pagesyncd-loop`, so `top -H` and `/proc/<pid>/task` show which
/// thread does the work. Before that it starts libuv's thread pool (disk syncs, name
/// resolution), whose threads inherit the name `pagesyncd-pool` and the process's nice value.
/// (Started lazily from the loop thread, the pool's four threads took the name
/// `pagesyncd-loop` too.)
public final class LoopThread: @unchecked Sendable {
    /// The thread's name (at most 15 bytes: the kernel's limit).
    public static let name = "pagesyncd-loop"
    /// The name of libuv's pool threads.
    public static let poolName = "pagesyncd-pool"
    private let body: @Sendable () -> Void

    /// A thread that will run `body` once started.
    public init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// Starts the thread (detached: it ends when `body` returns).
    public func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
            LoopThread.adoptProcessPriority()
            _ = setThreadName(pthread_self(), LoopThread.poolName)
            WorkPool.start()
            _ = setThreadName(pthread_self(), LoopThread.name)
            me.body()
            return nil
        }, context)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
    }

    /// Gives the calling thread the main thread's nice value (Linux: `who` 0 is the calling
    /// thread, the process id is the main thread's id).
    static func adoptProcessPriority() {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let processNice = getpriority(which, id_t(getpid()))
        guard errno == 0 else { return }
        errno = 0
        let own = getpriority(which, 0)
        guard errno == 0, own != processNice else { return }
        _ = setpriority(which, 0, processNice)
    }
}
