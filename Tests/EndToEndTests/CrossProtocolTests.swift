import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A client speaking another protocol, or smuggling control characters, gets one clear line.
@Suite("Cross-protocol input and control characters", .timeLimit(.minutes(1)))
struct CrossProtocolTests {
    /// A ClientHello as `openssl s_client -connect 127.0.0.1:45678 -servername pagesync.test`
    /// (OpenSSL 3) sent it, captured with `nc -l`: 319 bytes, three of them LF.
    static let clientHello: [UInt8] = {
        let hex = Array("160301013a010001360303e8db6462f142e9d535e0b8f324f12bdcfc31966d53c93a6ae9e34a9175ced64720d180c5392ca27badc7d45ebd713ea2634b62d05e7edb9112ea585d8c6966be61003e130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010000af00000012001000000d7061676573796e632e74657374000b000403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b0009080304030303020301002d00020101003300260024001d002058a997f0791bc773589e9cf5d88f587aca1bd80ee6f37e50caa9aacc582cf363".utf8)
        func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : c - 0x61 + 10 }
        return stride(from: 0, to: hex.count, by: 2).map { nibble(hex[$0]) << 4 | nibble(hex[$0 + 1]) }
    }()

    static func hasControl(_ line: String) -> Bool {
        line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    @Test("a TLS ClientHello gets one line saying this is a plaintext port, then the connection is closed")
    func tlsClientHello() async throws {
        #expect(Self.clientHello.count == 319 && Self.clientHello.first == 0x16)
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (bystander, _) = try await daemon.join(label: "bystander")
            let (client, _) = try await daemon.join(label: "tls")
            try await client.sendRaw(Self.clientHello)
            let reply = try await client.readServerLine()
            #expect(reply.code == 400, "got \(reply)")
            #expect(reply.raw == "ERR 400 this is a plaintext pagesync port, not TLS; connect without TLS")
            try await client.expectClosed()
            #expect(try await bystander.sync() == [])
            #expect(try await eventually { try await bystander.ok("STATUS").int("clients") == 1 }, "the TLS client is gone")
        }
    }

    @Test("only the first byte a connection sends is checked for TLS: a later line beginning with 0x16 is an ordinary bad line, ERR 400 and the connection kept")
    func handshakeByteLaterIsAnOrdinaryBadLine() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, _) = try await daemon.join(label: "later")
            #expect(try await client.command("PING one").header.raw == "OK PONG one")
            // In a read of its own, and after a good line in the same read.
            for bytes in [[0x16] + Array("abc\n".utf8), Array("PING two\n".utf8) + [0x16] + Array("abc\n".utf8)] {
                try await client.sendRaw(bytes)
                if bytes.first != 0x16 { #expect(try await client.readServerLine().raw == "OK PONG two") }
                let reply = try await client.readServerLine()
                #expect(reply.raw == "ERR 400 control character 0x16 in line", "\(reply)")
            }
            #expect(try await client.command("PING three").header.raw == "OK PONG three", "the connection is kept")
            #expect(try await client.ok("STATUS").int("clients") == 1)
        }
    }

    @Test("printf 'ping\\n\\x16abc\\nping\\n' | nc -q1 prints two OK PONG, the line between them an ERR 400")
    func handshakeByteLaterThroughNetcat() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            // bash: its printf knows \x16 (dash's does not).
            let script = "printf 'ping\\n\\x16abc\\nping\\n' | nc -q1 127.0.0.1 \(daemon.port)"
            let result = try await runProcess("/bin/bash", ["-c", script])
            #expect(result.status == 0, "\(script): \(result.output)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 4 && lines.first?.hasPrefix("HELLO ") == true, "\(lines)")
            #expect(Array(lines.dropFirst()) == ["OK PONG", "ERR 400 control character 0x16 in line", "OK PONG"], "\(lines)")
        }
    }

    @Test("openssl s_client against the plaintext port fails at once instead of hanging")
    func opensslClientFailsFast() async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, workspace in
            let log = workspace.url("s_client.log")
            let fd = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            #expect(fd >= 0)
            defer { close(fd) }
            let openssl = try ChildProcess(
                executable: "/usr/bin/openssl",
                arguments: ["s_client", "-connect", "127.0.0.1:\(daemon.port)", "-servername", "pagesync.test"],
                outputFD: fd)
            let ended = try await openssl.wait(timeout: .seconds(20))
            if ended == nil { openssl.send(signal: SIGKILL); _ = try await openssl.wait(timeout: .seconds(5)) }
            #expect(ended != nil && ended != .exited(0), "s_client: \(String(describing: ended))")
            #expect(try await eventually { daemon.stderr.contains("not TLS") }, "the daemon says why it closed")
            let (client, _) = try await daemon.join(label: "after")
            #expect(try await client.ok("STATUS").int("clients") == 1, "the TLS connection is gone")
        }
    }

    @Test("C1 control characters are refused like C0 ones, and no reply echoes a control character",
          arguments: ["\u{85}", "\u{9B}", "\u{80}", "\u{9F}", "\u{7F}", "\u{1B}"])
    func controlCharactersAreRefused(control: String) async throws {
        try await withDaemon(["talk.txt": Documents.formFeed(pages: 3)]) { daemon, _ in
            let (client, _) = try await daemon.join(label: "c1")
            for line in ["PING a\(control)b", "NEXT\(control)", "JUMP\(control)[2J", "NAME x\(control)"] {
                try await client.send(line)
                let reply = try await client.readServerLine()
                #expect(reply.code == 400, "\(line.debugDescription): \(reply)")
                #expect(reply.raw.contains("control character"), "\(reply)")
                #expect(!Self.hasControl(reply.raw), "the reply echoes a control character: \(reply.raw.debugDescription)")
            }
            #expect(try await client.sync() == [])
            #expect(try await client.ok("STATUS").version == 0)
        }
    }
}
