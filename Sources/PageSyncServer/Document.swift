#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PageSyncCore

/// A document as a room serves it: an immutable page index plus the means to
/// read one page's bytes. A file document keeps the descriptor it was indexed
/// from, so the text it serves always matches its index, even when the file is
/// replaced on disk (a re-index then builds a new `Document`).
///
/// Large files are never loaded whole: they are scanned in chunks and only the
/// byte offsets of page boundaries are kept. A markdown document split by its structure is read
/// whole to parse it, up to 8 MiB, and then let go too (see ``DocumentIndexer``).
public final class Document: Sendable {
    /// What the document was built from.
    public let source: DocumentSource
    /// The page boundaries.
    public let index: PageIndex
    /// A hash of the content and its pagination: the same file gives the same id on every
    /// daemon, and it changes when the content does.
    public let id: String
    /// The title its front matter gives (markdown's `title:`), if any.
    public let title: String?
    /// ``title`` as `title=` carries it on the wire (percent-encoded, see ``WireText``).
    public let wireTitle: String?
    /// What to tell the operator once about how it was split (why it is one page and what would
    /// split it), if anything.
    public let advice: String?
    /// The speaker notes of its pages: from its markdown comments, or from the notes file beside
    /// it (``notesPath(for:)``). Never part of ``text(of:limit:)``.
    public let notes: PageNotes
    private let storage: Storage

    private enum Storage: Sendable {
        case file(fd: Int32)
        case memory([UInt8])
    }

    /// The number of pages (at least 1).
    public var pageCount: Int { index.count }

    /// Opens and indexes a document.
    /// - Throws: `DocumentError` with a one-line message when the file cannot be read.
    /// The built-in guide names `guideAddress` in its examples: the address the daemon listens on.
    /// `notes`: a notes file to read instead of ``notesPath(for:)`` or a markdown document's own
    /// notes (a room's `notes:`).
    public static func open(_ source: DocumentSource, pagination: Pagination, notes: String? = nil,
                            guideAddress: ListenAddress = ServerConfig.defaultListen) throws(DocumentError) -> Document {
        switch source {
        case .builtinGuide:
            let bytes = BuiltinGuide.bytes(address: guideAddress)
            return Document(source: source, scan: DocumentIndexer.scan(bytes, pagination: pagination, path: nil),
                            storage: .memory(bytes))
        case .file(let path):
            return try openFile(path: path, pagination: pagination, notes: notes)
        }
    }

    private init(source: DocumentSource, scan: DocumentScan, storage: Storage) {
        self.source = source
        self.index = scan.index
        self.id = scan.id
        self.title = scan.title
        self.wireTitle = scan.title.map(WireText.percentEncoded)
        self.advice = scan.advice
        self.notes = scan.notes
        // A markdown document with notes is served from its text without them.
        if let audience = scan.audience {
            if case .file(let fd) = storage { _ = Glibc.close(fd) }
            self.storage = .memory(audience)
        } else {
            self.storage = storage
        }
    }

    /// The notes file of a document that is not markdown read whole: `<path>.notes` (the
    /// document's whole name, `talk.txt.notes` beside `talk.txt`).
    public static func notesPath(for path: String) -> String { path + ".notes" }

    deinit {
        if case .file(let fd) = storage { _ = Glibc.close(fd) }
    }

    private static func openFile(path: String, pagination: Pagination, notes: String?) throws(DocumentError) -> Document {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DocumentError(path: path, errno: errno) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            _ = Glibc.close(fd)
            throw DocumentError(path: path, errno: e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(fd)
            throw DocumentError(path: path, message: "not a regular file")
        }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        var indexer = DocumentIndexer(pagination: pagination, path: path)
        let chunkSize = 4 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: off_t = 0
        // The id is a hash of the content (and pagination), so daemons serving the same file
        // from different disks agree on it.
        while true {
            let n = pread(fd, buffer.baseAddress, chunkSize, offset)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                _ = Glibc.close(fd)
                throw DocumentError(path: path, errno: e)
            }
            if n == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            indexer.consume(chunk)
            offset += off_t(n)
        }
        var scan = indexer.finish()
        if let notes {
            scan.notes = .none
            readNotesFile(notes, of: path, pagination: pagination, into: &scan)
        } else if scan.audience == nil, scan.notes.isEmpty {
            readNotesFile(notesPath(for: path), of: path, pagination: pagination, into: &scan)
        }
        return Document(source: .file(path), scan: scan, storage: .file(fd: fd))
    }

    /// Reads the notes file `notesPath` of the document at `path`, if there is one, split as the
    /// document is; what went wrong or does not match goes to the advice (logged once per load),
    /// never failing the document.
    private static func readNotesFile(_ notesPath: String, of path: String, pagination: Pagination, into scan: inout DocumentScan) {
        var problem: String?
        switch NotesFile.read(notesPath) {
        case .missing: return
        case .failed(let message): problem = message
        case .bytes(let bytes):
            let ranges = DocumentIndexer.scan(bytes, pagination: pagination, path: path).index.ranges
            scan.notes = PageNotes(file: bytes, ranges: ranges, pageCount: scan.index.count)
            problem = scan.notes.mismatch
        }
        if let problem {
            scan.advice = [scan.advice, "\(notesPath): \(problem)"].compactMap { $0 }.joined(separator: "; ")
        }
    }

    /// Reads up to `limit` bytes of a page.
    /// - Returns: the bytes, the page's full size, and whether it was cut at `limit`.
    public func text(of page: PageNumber, limit: Int) throws(DocumentError) -> (bytes: [UInt8], pageByteCount: Int, truncated: Bool) {
        let range = index.byteRange(of: page)
        return try read(range, count: min(range.count, limit))
    }

    /// A piece of page `page` starting `offset` bytes into it: at most `limit` bytes, ending
    /// after the last line feed that fits so lines arrive whole. Only a line longer than `limit`
    /// is cut, at a UTF-8 character boundary; `splitLine` then says the last line goes on in the
    /// next piece. `next` is the offset of the next piece (`pageByteCount` when this was the end).
    /// Returns nil when `offset` is past the end of the page.
    public func text(of page: PageNumber, from offset: Int, limit: Int) throws(DocumentError)
        -> (bytes: [UInt8], pageByteCount: Int, next: Int, splitLine: Bool)?
    {
        let whole = index.byteRange(of: page)
        guard offset >= 0, offset <= whole.count else { return nil }
        let range = (whole.lowerBound + offset)..<whole.upperBound
        var (bytes, _, more) = try read(range, count: min(range.count, max(1, limit)))
        var split = false
        if more {
            if let lastLF = bytes.lastIndex(of: 0x0A) {
                bytes.removeSubrange((lastLF + 1)...)
            } else {
                // One line longer than the limit: cut it before a UTF-8 continuation byte.
                var cut = bytes.count
                if let last = bytes.last, last >= 0x80 {
                    var lead = bytes.count - 1
                    while lead > 0 && bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
                    if lead > 0 { cut = lead }  // the next piece starts with a whole character
                }
                bytes.removeSubrange(cut...)
                split = true
            }
        }
        return (bytes, whole.count, offset + bytes.count, split)
    }

    private func read(_ range: Range<Int>, count: Int) throws(DocumentError) -> (bytes: [UInt8], pageByteCount: Int, truncated: Bool) {
        switch storage {
        case .memory(let all):
            return (Array(all[range.lowerBound..<(range.lowerBound + count)]), range.count, count < range.count)
        case .file(let fd):
            var out = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = out.withUnsafeMutableBytes { buf in
                    pread(fd, buf.baseAddress! + done, count - done, off_t(range.lowerBound + done))
                }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw DocumentError(path: source.description, errno: errno)
                }
                if n == 0 { break }  // the file shrank under us; a re-index follows
                done += n
            }
            if done < count { out.removeSubrange(done...) }
            return (out, range.count, count < range.count)
        }
    }
}

/// A document that could not be opened or read, in one line.
public struct DocumentError: Error, Sendable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// What went wrong.
    public var message: String

    init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    init(path: String, errno code: Int32) {
        self.init(path: path, message: String(cString: strerror(code)))
    }

    /// `<path>: <message>`.
    public var description: String { "\(path): \(message)" }
}

/// 64-bit FNV-1a, for short content identifiers (not for security).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for b in bytes {
            value ^= UInt64(b)
            value &*= 0x0000_0100_0000_01b3
        }
    }

    mutating func add(_ word: UInt64) {
        withUnsafeBytes(of: word.littleEndian) { add($0) }
    }

    /// 12 hex digits: short on the wire, ample to tell versions of a file apart.
    var hex: String {
        let s = String(value & 0xFFFF_FFFF_FFFF, radix: 16)
        return String(repeating: "0", count: 12 - s.count) + s
    }
}
