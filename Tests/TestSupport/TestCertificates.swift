import Foundation

/// Certificates made by the `openssl` CLI for one test (shared by UVTests and EndToEndTests through
/// the TestSupport target): a CA and a server certificate for
/// `localhost`, 127.0.0.1 and ::1 (ECDSA P-256), plus a second, unrelated CA.
public struct TestCertificates: Sendable {
    /// The temporary directory holding the files.
    public let directory: URL
    /// The test CA's certificate (PEM).
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }
    /// The server certificate (PEM), signed by the test CA.
    public var certificateFile: String { directory.appendingPathComponent("server.pem").path }
    /// The server certificate's private key (PEM).
    public var keyFile: String { directory.appendingPathComponent("server.key").path }
    /// An unrelated CA's certificate (PEM), for "unknown CA" tests.
    public var otherCAFile: String { directory.appendingPathComponent("other-ca.pem").path }

    /// Makes the files in a fresh temporary directory. `names` go into the server certificate's
    /// subjectAltName (default localhost, 127.0.0.1, ::1).
    public init(names: String = "DNS:localhost,IP:127.0.0.1,IP:::1") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pagesync-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try makeCA("ca", subject: "/CN=pagesync test CA")
        try makeCA("other-ca", subject: "/CN=some other CA")
        try makeLeaf("server", signedBy: "ca", names: names)
    }

    /// A further leaf `name` (.pem, .key) signed by the test CA (or `ca`, e.g. "other-ca"), valid
    /// for `days`; `days: -1` makes one that has already expired (its notAfter is a day before now).
    @discardableResult
    public func makeLeaf(_ name: String, signedBy ca: String = "ca", names: String = "DNS:localhost,IP:127.0.0.1,IP:::1",
                         days: Int = 2) throws -> (cert: String, key: String) {
        try run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key")
        try run("req", "-new", "-key", "\(name).key", "-subj", "/CN=\(name)", "-out", "\(name).csr")
        let ext = "subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n"
        try ext.write(to: directory.appendingPathComponent("\(name).ext"), atomically: true, encoding: .utf8)
        try run("x509", "-req", "-in", "\(name).csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key", "-CAcreateserial",
                "-days", "\(days)", "-sha256", "-extfile", "\(name).ext", "-out", "\(name).pem")
        return (directory.appendingPathComponent("\(name).pem").path, directory.appendingPathComponent("\(name).key").path)
    }

    /// Rotation as an operator does it: a new leaf `name` put at the server certificate's and
    /// key's paths (the daemon then gets SIGHUP).
    public func rotateServer(to name: String) throws {
        let rotated = try makeLeaf(name)
        try FileManager.default.removeItem(atPath: certificateFile)
        try FileManager.default.copyItem(atPath: rotated.cert, toPath: certificateFile)
        try FileManager.default.removeItem(atPath: keyFile)
        try FileManager.default.copyItem(atPath: rotated.key, toPath: keyFile)
    }

    /// The client identities tests of client certificates use: `good`, signed by the test CA;
    /// `expired`, signed by it and already expired; `stranger`, signed by the other CA.
    public func makeClientIdentities() throws -> ClientIdentities {
        ClientIdentities(good: try makeLeaf("client"), expired: try makeLeaf("expired-client", days: -1),
                         stranger: try makeLeaf("stranger", signedBy: "other-ca"))
    }

    /// What ``makeClientIdentities()`` makes: each a certificate file and its key file.
    public struct ClientIdentities: Sendable {
        public var good: (cert: String, key: String)
        public var expired: (cert: String, key: String)
        public var stranger: (cert: String, key: String)
        /// The three, in that order.
        public var all: ((cert: String, key: String), (cert: String, key: String), (cert: String, key: String)) {
            (good, expired, stranger)
        }
    }

    private func makeCA(_ name: String, subject: String) throws {
        try run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key")
        try run("req", "-x509", "-new", "-key", "\(name).key", "-sha256", "-days", "2", "-subj", subject, "-out", "\(name).pem")
    }

    private func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = directory
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestCertificateError("openssl \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
    }

    /// Deletes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// `openssl` failed while making test certificates; the message quotes its stderr.
public struct TestCertificateError: Error, CustomStringConvertible {
    /// What failed.
    public let description: String
    init(_ description: String) { self.description = description }
}
