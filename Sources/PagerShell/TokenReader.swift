import PageSyncPager
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a control token from where ``TokenSource`` says: a file, or the terminal without echo.
/// Runs before the event loop starts, so blocking reads are fine here.
public enum TokenReader {
    /// A one-line error for stderr.
    public struct ProblemText: Error, Sendable, CustomStringConvertible {
        /// The line.
        public var text: String
        public var description: String { text }
    }

    /// The largest token file read (a token is one short line).
    static let maxFileBytes = 64 * 1024

    /// The token the options and the environment ask for (see ``TokenSource``), reading a file
    /// or prompting as needed: `.success(nil)` when there is none, or a one-line error.
    public static func resolve(token: String?, tokenFile: String?,
                               environment: [String: String]) -> Result<String?, ProblemText> {
        TokenSource.choose(token: token, tokenFile: tokenFile, environment: environment)
            .flatMap { Self.token(from: $0) }
            .mapError { ProblemText(text: $0.description) }
    }

    /// What is wrong with the token options, without reading or asking anything (nil: nothing).
    public static func problem(token: String?, tokenFile: String?, environment: [String: String]) -> String? {
        if case .failure(let e) = TokenSource.choose(token: token, tokenFile: tokenFile, environment: environment) {
            return e.description
        }
        return nil
    }

    /// The token of `source`, nil for ``TokenSource/none``, or a one-line error.
    public static func token(from source: TokenSource) -> Result<String?, TokenError> {
        switch source {
        case .none: return .success(nil)
        case .value(let v): return .success(v)
        case .file(let path): return readFile(path).map { Optional($0) }
        case .prompt: return prompt().map { Optional($0) }
        }
    }

    private static func readFile(_ path: String) -> Result<String, TokenError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(TokenError("--token-file \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < maxFileBytes {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return .failure(TokenError("--token-file \(path): \(String(cString: strerror(errno)))")) }
            if n == 0 { break }
            bytes += buffer[0..<n]
            if bytes.contains(0x0A) { break }
        }
        return TokenSource.token(fromFile: bytes, path: path)
    }

    /// Asks on the controlling terminal (`/dev/tty`) with echo off, and restores the terminal.
    private static func prompt() -> Result<String, TokenError> {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return .failure(TokenError("--token -: no terminal to ask on (use --token-file or PAGESYNC_TOKEN)")) }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return .failure(TokenError("--token -: cannot read the terminal's settings")) }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ICANON)
        let ask = Array("control token: ".utf8)
        _ = ask.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else { return .failure(TokenError("--token -: cannot turn echo off")) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < maxFileBytes {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            line.append(byte)
        }
        _ = tcsetattr(fd, TCSAFLUSH, &saved)
        _ = [UInt8(0x0A)].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return TokenSource.token(typed: String(decoding: line, as: UTF8.self))
    }
}
