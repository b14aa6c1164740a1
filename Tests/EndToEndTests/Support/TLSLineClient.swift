import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A line-protocol client over TLS, the way a script uses `openssl s_client -quiet`: the real
/// `openssl s_client` process speaks TLS to the daemon and the test talks plaintext to it through
/// a socket pair (its stdin and stdout), with every ``LineClient`` helper.
///
/// The certificate is verified against `caFile` (`-verify_return_error`), so a handshake that
/// fails shows up as a closed connection with the reason in ``errors``. Call ``close()`` (it kills
/// and reaps the `openssl` process).
final class TLSLineClient: @unchecked Sendable {
    /// The plaintext side.
    let client: LineClient
    private let process: ChildProcess
    private let errorLog: String

    /// Starts `openssl s_client` against `127.0.0.1:port`, verifying the server with `caFile`.
    init(port: UInt16, caFile: String, in workspace: Workspace, label: String) throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw HarnessError("socketpair: \(String(cString: strerror(errno)))")
        }
        errorLog = workspace.root.path + "/s_client-\(label.replacingOccurrences(of: " ", with: "-"))-\(pair[0]).log"
        let logFD = open(errorLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard logFD >= 0 else {
            Glibc.close(pair[0]); Glibc.close(pair[1])
            throw HarnessError("open \(errorLog): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(logFD); Glibc.close(pair[1]) }
        do {
            process = try ChildProcess(
                executable: "/usr/bin/openssl",
                arguments: ["s_client", "-quiet", "-verify_return_error", "-CAfile", caFile, "-connect", "127.0.0.1:\(port)"],
                outputFD: logFD, stdioFD: pair[1])
        } catch {
            Glibc.close(pair[0])
            throw error
        }
        client = LineClient.adopting(fd: pair[0], label: label)
    }

    /// Connects and reads the `HELLO` line (which arrives only once the handshake is done).
    static func join(port: UInt16, caFile: String, in workspace: Workspace, label: String) async throws -> (TLSLineClient, ServerLine) {
        let tls = try TLSLineClient(port: port, caFile: caFile, in: workspace, label: label)
        do {
            let hello = try await tls.client.expectLine(prefix: "HELLO pagesync/1 ")
            return (tls, hello)
        } catch {
            tls.close()
            throw HarnessError("\(error); openssl s_client said: \(tls.errors)")
        }
    }

    /// What `openssl s_client` wrote to stderr (verification results, errors).
    var errors: String { (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "" }

    /// Closes the plaintext side and kills and reaps the `openssl` process.
    func close() {
        client.close()
        process.killAndReap()
    }
}
