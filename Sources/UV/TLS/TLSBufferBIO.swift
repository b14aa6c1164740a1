import COpenSSL

/// One loop's buffer for the ciphertext its TLS sessions produce, shared by all of them: a
/// session that writes while the buffer is free encrypts into it, and the bytes are taken (sent)
/// right after, so the usual record (a state line) costs no allocation and stays in warm memory,
/// and an idle session holds nothing. While one session's bytes wait in it, other sessions use
/// their own storage (``TLSBufferPair``).
///
/// Not thread-safe: one loop, one thread.
package final class TLSOutputScratch {
    /// Bytes a loop's scratch holds: a few full TLS records (16 KiB of plaintext each).
    package static let defaultCapacity = 64 * 1024

    package let storage: UnsafeMutableRawBufferPointer
    /// Bytes of the owner's output at the start of ``storage``.
    fileprivate(set) var used = 0
    /// The pair whose output is in ``storage``; nil while it is free (then ``used`` is 0).
    fileprivate(set) var owner: ObjectIdentifier?

    package init(capacity: Int = TLSOutputScratch.defaultCapacity) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// True while no session's bytes wait in it.
    package var isFree: Bool { owner == nil }
}

/// The ciphertext one ``TLSEngine`` has received but OpenSSL has not read yet, and the ciphertext
/// OpenSSL has produced but the engine's user has not taken yet. Both are plain Swift arrays whose
/// storage is released the moment they are empty, so an idle TLS connection holds no buffer here
/// (a `BIO_s_mem` keeps the capacity its largest handshake flight grew it to). With a
/// ``TLSOutputScratch``, output goes to the shared scratch whenever it is free and the bytes fit,
/// and to the pair's own array otherwise (order is kept: once output is in the array, the rest
/// follows it there until taken).
///
/// Not thread-safe: one engine, one thread.
package final class TLSBufferPair {
    /// Received ciphertext; bytes before ``inputStart`` were already read.
    package private(set) var input: [UInt8] = []
    package private(set) var inputStart = 0
    /// Ciphertext waiting to be taken that is not in the scratch.
    package private(set) var output: [UInt8] = []
    private let scratch: TLSOutputScratch?

    /// A pair whose output uses `scratch` when it can (nil: always its own array).
    package init(scratch: TLSOutputScratch? = nil) {
        self.scratch = scratch
    }

    deinit {
        if let scratch, scratch.owner == ObjectIdentifier(self) {
            scratch.owner = nil
            scratch.used = 0
        }
    }

    /// Bytes of storage the two arrays hold (0 when both are empty; the shared scratch is not counted).
    package var capacity: Int { input.capacity + output.capacity }

    /// Received bytes not read yet.
    package var unreadCount: Int { input.count - inputStart }

    /// Produced bytes not taken yet.
    package var outputCount: Int {
        if let scratch, scratch.owner == ObjectIdentifier(self) { return scratch.used }
        return output.count
    }

    /// True while this pair's output is in the shared scratch.
    package var holdsScratch: Bool { scratch.map { $0.owner == ObjectIdentifier(self) } ?? false }

    /// Stores received ciphertext (copied), dropping what was already read.
    package func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if inputStart > 0 {
            input.removeSubrange(0..<inputStart)
            inputStart = 0
        }
        input.append(contentsOf: bytes)
    }

    /// Copies up to `destination.count` unread bytes into `destination`; returns how many (0 when
    /// there are none). Releases the input's storage once everything was read.
    package func read(into destination: UnsafeMutableRawBufferPointer) -> Int {
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

    /// Appends produced ciphertext to the output: into the scratch when it is free (or already
    /// this pair's) and the bytes fit, else into the pair's own array.
    package func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if output.isEmpty, let scratch {
            let me = ObjectIdentifier(self)
            if scratch.owner == nil || scratch.owner == me {
                if scratch.used + bytes.count <= scratch.storage.count {
                    (scratch.storage.baseAddress! + scratch.used).copyMemory(from: source, byteCount: bytes.count)
                    scratch.used += bytes.count
                    scratch.owner = me
                    return
                }
                if scratch.owner == me {
                    // Too much for the scratch: what is there moves to the array, ahead of `bytes`.
                    output.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch.storage[0..<scratch.used]))
                    scratch.owner = nil
                    scratch.used = 0
                }
            }
        }
        output.append(contentsOf: bytes)
    }

    /// Hands the output to `body` (valid only during the call; `body` must not write to this
    /// pair), then forgets it and releases its storage (or frees the scratch). Does nothing when
    /// there is none.
    package func takeOutput(_ body: (UnsafeRawBufferPointer) -> Void) {
        if let scratch, scratch.owner == ObjectIdentifier(self) {
            body(UnsafeRawBufferPointer(rebasing: scratch.storage[0..<scratch.used]))
            scratch.owner = nil
            scratch.used = 0
            return
        }
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
            case BIO_CTRL_WPENDING: return TLSBufferBIO.buffers(bio)?.outputCount ?? 0
            default: return 0  // not at end of file; nothing else is supported
            }
        }
        return method
    }
}
