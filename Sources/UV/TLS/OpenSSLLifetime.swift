import COpenSSL

/// OpenSSL's process-wide state, and when it may be freed.
///
/// By default libcrypto registers `OPENSSL_cleanup` with `atexit` on its first use, so
/// `exit()` frees OpenSSL's global state (the default library context, its random
/// generators, the per-thread handler lists) on the exiting thread, assuming, as its source
/// says, that no other thread is left. In pagesyncd another one is: the loop thread used
/// OpenSSL (the token key's `RAND_bytes`, `HMAC`, TLS) and is still exiting, running
/// OpenSSL's thread-local destructor, when the main task calls `exit()`. Overlapping, the
/// two free the same memory: `malloc_consolidate(): invalid chunk size` or a double free,
/// and SIGABRT, at a clean stop.
public enum OpenSSLLifetime {
    /// Tells OpenSSL to keep its global state until the process is gone
    /// (`OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT)`): nothing of it is freed by `exit()`,
    /// so a thread still ending meanwhile finds it intact. Only the first initialization of
    /// OpenSSL in the process decides this: call it before anything else uses OpenSSL.
    /// Thread-safe; later calls change nothing. Returns false when OpenSSL failed to initialize.
    @discardableResult
    public static func keepUntilExit() -> Bool {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1
    }
}
