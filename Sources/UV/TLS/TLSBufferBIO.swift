import COpenSSL

/// The ciphertext one ``TLSEngine`` has received but OpenSSL has not read yet, and the ciphertext
/// OpenSSL has produced but the engine's user has not taken yet. Both are plain Swift arrays whose
/// storage is released the moment they are empty, so an idle TLS connection holds no buffer here
/// (a `BIO_s_mem` keeps the capacity its largest handshake flight grew it to).
///
/// Not thread-safe: one engine, one thread.
final class TLSBufferPair {
    /// Received ciphertext; bytes before ``inputStart`` were already read.
    private(set) var input: [UInt8] = []
    private(set) var inputStart = 0
    /// Ciphertext waiting to be taken.
    private(set) var output: [UInt8] = []

    /// Bytes of storage the two arrays hold (0 when both are empty).
    var capacity: Int { input.capacity + output.capacity }

    /// Received bytes not read yet.
    var unreadCount: Int { input.count - inputStart }

    /// Stores received ciphertext (copied), dropping what was already read.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if inputStart > 0 {
            input.removeSubrange(0..<inputStart)
            inputStart = 0
        }
        input.append(contentsOf: bytes)
    }

    /// Copies up to `destination.count` unread bytes into `destination`; returns how many (0 when
    /// there are none). Releases the input's storage once everything was read.
    func read(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(destination.count, unreadCount)
        guard count > 0, let target = destination.baseAddress else { return 0 }
        input.withUnsafeBytes { source in
            target.copyMemory(from: source.baseAddress! + inputStart, byteCount: count)
        }
        inputStart += count
        if inputStart == input.count {
            input = []
            inputStart = 0
        }
        return count
    }

    /// Appends produced ciphertext to the output.
    func write(_ bytes: UnsafeRawBufferPointer) {
        output.append(contentsOf: bytes)
    }

    /// Hands the output to `body` (valid only during the call), then releases it. Does nothing
    /// when there is none.
    func takeOutput(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard !output.isEmpty else { return }
        let taken = output
        output = []
        taken.withUnsafeBytes(body)
    }
}

/// A custom OpenSSL BIO type (`BIO_meth_new`) whose reads and writes go to a ``TLSBufferPair``:
/// one BIO serves as both the read and the write BIO of an `SSL`. Reading an empty pair says
/// "retry" (SSL_ERROR_WANT_READ), never end of file; writing always takes every byte.
enum TLSBufferBIO {
    /// The method, made once (process-wide, immutable after creation).
    nonisolated(unsafe) static let method: OpaquePointer? = makeMethod()

    /// A new BIO reading from and writing to `buffers`, which must outlive it (the engine that
    /// owns both frees the `SSL`, and with it the BIO, before its buffers).
    static func make(_ buffers: TLSBufferPair) -> OpaquePointer? {
        guard let method, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(buffers).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    private static func buffers(_ bio: OpaquePointer?) -> TLSBufferPair? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<TLSBufferPair>.fromOpaque(data).takeUnretainedValue()
    }

    /// `BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY` (what `BIO_clear_retry_flags` clears).
    private static let retryFlags = BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY

    private static func makeMethod() -> OpaquePointer? {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pagesync buffers") else { return nil }
        _ = BIO_meth_set_write(method) { bio, data, length -> Int32 in
            BIO_clear_flags(bio, TLSBufferBIO.retryFlags)
            guard let pair = TLSBufferBIO.buffers(bio), let data, length > 0 else { return 0 }
            pair.write(UnsafeRawBufferPointer(start: data, count: Int(length)))
            return length
        }
        _ = BIO_meth_set_read(method) { bio, data, length -> Int32 in
            BIO_clear_flags(bio, TLSBufferBIO.retryFlags)
            guard let pair = TLSBufferBIO.buffers(bio), let data, length > 0 else { return 0 }
            let count = pair.read(into: UnsafeMutableRawBufferPointer(start: data, count: Int(length)))
            if count == 0 {
                BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY)
                return -1
            }
            return Int32(count)
        }
        _ = BIO_meth_set_ctrl(method) { bio, command, _, _ -> Int in
            switch command {
            case BIO_CTRL_FLUSH: return 1
            case BIO_CTRL_PENDING: return TLSBufferBIO.buffers(bio)?.unreadCount ?? 0
            case BIO_CTRL_WPENDING: return TLSBufferBIO.buffers(bio)?.output.count ?? 0
            default: return 0  // not at end of file; nothing else is supported
            }
        }
        return method
    }
}
