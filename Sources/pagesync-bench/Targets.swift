import ArgumentParser
import PageSyncCore

/// A server the bench can drive. Everything protocol-specific lives here; the rest of the bench
/// only sees "follower handshake", "line is a delivery", "change command", "ping". pagesyncd's
/// lines are read with the pager's parser (``WireLineView``) and its commands written with
/// ``CommandEncoder``.
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
        case .pagesyncd: return WireLineView(line).kind == .hello
        case .redis: return line.hasASCIIPrefix(":")          // the subscription count after "subscribe"
        case .nats, .floor: return line.hasASCIIPrefix("PONG")
        }
    }

    /// True for a line that means the server refused us (ERR 503, -ERR, BYE ...).
    @inline(__always)
    func isRefusal(_ line: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .pagesyncd:
            let kind = WireLineView(line).kind
            return kind == .error || kind == .bye
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
        case .pagesyncd: return CommandEncoder.bytes(.ping(nil))
        case .floor: return Array("PING\n".utf8)
        case .redis, .nats: return Array("PING\r\n".utf8)
        }
    }

    /// True for the reply to `ping` ("OK PONG", "+PONG", "PONG").
    @inline(__always)
    func isPong(_ line: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .pagesyncd:
            let reply = WireLineView(line)
            return reply.kind == .ok && reply.firstPlainWord(is: "PONG")
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

/// The message every target fans out for change `seq`: a pagesync `PAGE` line (``Wire``'s), its
/// `doc=` padded so that every target carries the same payload size. Followers read `version=<seq>`
/// from it as from pagesyncd's own.
struct Payload: Sendable {
    /// Total bytes, including the trailing LF.
    let size: Int

    /// The `PAGE` line of room `bench` (2 pages) at version `version`, changed by `by`, with `doc=`
    /// as given.
    static func pageLine(version: Int, by: String, doc: String) -> [UInt8] {
        let state = RoomState(page: version % 2 == 1 ? PageNumber(offset: 1) : .first, pageCount: 2,
                              version: UInt64(max(0, version)), by: by, doc: doc)
        return Wire.event(room: "bench", state).bytes
    }

    /// The payload for change `seq` (exactly `size` bytes when `size` is large enough).
    func bytes(seq: Int) -> [UInt8] {
        let pad = size - Self.pageLine(version: seq, by: "driver", doc: "").count
        let hex = Array("0123456789abcdef".utf8)
        let doc = String(decoding: (0..<max(0, pad)).map { hex[($0 &* 7 &+ seq) & 15] }, as: UTF8.self)
        return Self.pageLine(version: seq, by: "driver", doc: doc)
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
