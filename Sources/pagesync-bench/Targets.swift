import ArgumentParser

/// A server the bench can drive. Everything protocol-specific lives here; the rest of the bench
/// only sees "follower handshake", "line is a delivery", "change command", "ping".
enum Target: String, ExpressibleByArgument, CaseIterable, Sendable {
    case pagesyncd, redis, nats, floor

    /// The pub/sub channel (redis, nats) the bench uses.
    static let channel = "ch"

    /// What a follower sends right after connecting.
    var followerHello: [UInt8] {
        switch self {
        case .pagesyncd: return []
        case .redis: return Array("*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\n\(Target.channel)\r\n".utf8)
        case .nats: return Array("CONNECT {\"verbose\":false,\"pedantic\":false,\"echo\":false}\r\nSUB \(Target.channel) 1\r\nPING\r\n".utf8)
        case .floor: return Array("PING\n".utf8)
        }
    }

    /// True for the line that completes a follower's handshake (it is now subscribed).
    @inline(__always)
    func isFollowerReady(_ line: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .pagesyncd: return line.hasASCIIPrefix("HELLO ")
        case .redis: return line.hasASCIIPrefix(":")          // the subscription count after "subscribe"
        case .nats, .floor: return line.hasASCIIPrefix("PONG")
        }
    }

    /// True for a line that means the server refused us (ERR 503, -ERR, BYE ...).
    @inline(__always)
    func isRefusal(_ line: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .pagesyncd: return line.hasASCIIPrefix("ERR") || line.hasASCIIPrefix("BYE")
        case .redis, .nats: return line.hasASCIIPrefix("-")
        case .floor: return false
        }
    }

    /// Sent once on a plain (non-follower) connection before pings: NATS wants CONNECT.
    var clientHello: [UInt8] {
        switch self {
        case .nats: return Array("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n".utf8)
        default: return []
        }
    }

    /// One round-trip command.
    var ping: [UInt8] {
        switch self {
        case .pagesyncd, .floor: return Array("PING\n".utf8)
        case .redis, .nats: return Array("PING\r\n".utf8)
        }
    }

    /// True for the reply to `ping` ("OK PONG", "+PONG", "PONG").
    @inline(__always)
    func isPong(_ line: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .pagesyncd: return line.hasASCIIPrefix("OK PONG")
        case .redis: return line.hasASCIIPrefix("+PONG")
        case .nats, .floor: return line.hasASCIIPrefix("PONG")
        }
    }

    /// True for a server keep-alive probe the client must answer (NATS `PING`).
    @inline(__always)
    func isServerPing(_ line: UnsafeRawBufferPointer) -> Bool {
        self == .nats && line.count == 4 && line.hasASCIIPrefix("PING")
    }
}

/// The message every target fans out for change `seq`: a pagesync `PAGE` line, padded to a fixed
/// size so every target carries the same payload. Followers find `version=<seq>` in it.
struct Payload: Sendable {
    /// Total bytes, including the trailing LF.
    let size: Int

    /// The payload for change `seq` (exactly `size` bytes when `size` is large enough).
    func bytes(seq: Int) -> [UInt8] {
        var line = Array("PAGE room=bench page=\(seq % 2 == 1 ? 2 : 1) pages=2 version=\(seq) by=driver doc=".utf8)
        let pad = size - 1 - line.count
        if pad > 0 {
            let hex = Array("0123456789abcdef".utf8)
            for i in 0..<pad { line.append(hex[(i &* 7 &+ seq) & 15]) }
        }
        line.append(0x0A)
        return line
    }

    /// The bytes the driver sends to publish change `seq` on `target` (not pagesyncd, whose
    /// driver turns pages instead).
    func publish(seq: Int, on target: Target) -> [UInt8] {
        let body = bytes(seq: seq)
        switch target {
        case .redis:
            return Array("*3\r\n$7\r\nPUBLISH\r\n$\(Target.channel.utf8.count)\r\n\(Target.channel)\r\n$\(body.count)\r\n".utf8) + body + [0x0D, 0x0A]
        case .nats:
            return Array("PUB \(Target.channel) \(body.count)\r\n".utf8) + body + [0x0D, 0x0A]
        case .floor:
            return body
        case .pagesyncd:
            preconditionFailure("pagesyncd changes are page turns")
        }
    }
}
