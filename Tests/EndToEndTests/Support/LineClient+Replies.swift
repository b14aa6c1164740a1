import Foundation
import PageSyncCore

/// The protocol on top of the lines: parsed lines, replies (multi-line ones whole), `OK` or a
/// failure, and `PING` as a barrier.
extension LineClient {
    /// The next line, parsed.
    func readServerLine() async throws -> ServerLine {
        ServerLine(try await readLine())
    }

    /// Reads one line and fails unless it starts with `prefix`. Returns the parsed line.
    @discardableResult
    func expectLine(prefix: String) async throws -> ServerLine {
        let line = try await readLine()
        guard line.hasPrefix(prefix) else {
            throw HarnessError("\(label): expected a line starting with \(prefix.debugDescription), got \(line.debugDescription)")
        }
        return ServerLine(line)
    }

    /// The next reply: one `OK`/`ERR` line, or a whole multi-line reply up to `.`, unstuffed.
    /// Events that arrive before it (`PAGE`, `AUDIENCE`, `HAND`) are skipped and kept in `skippedEvents`.
    func readReply() async throws -> Reply {
        var header = try await readServerLine()
        while header.kind == "PAGE" || header.kind == "AUDIENCE" || header.kind == "HAND" {
            skippedEvents.append(header)
            header = try await readServerLine()
        }
        guard header.kind == "OK" || header.kind == "ERR" else {
            throw HarnessError("\(label): expected a reply (OK/ERR), got \(header.raw.debugDescription)")
        }
        guard Reply.isMultiLine(header) else { return Reply(header: header, lines: []) }
        var lines: [String] = []
        while let content = DotUnstuffer.unstuff(Substring(try await readLine())) { lines.append(String(content)) }
        return Reply(header: header, lines: lines)
    }

    /// Returns and forgets the events `readReply()` skipped.
    func takeSkippedEvents() -> [ServerLine] {
        defer { skippedEvents.removeAll() }
        return skippedEvents
    }

    /// Sends `line` and returns its reply (skipping events that come first).
    func command(_ line: String) async throws -> Reply {
        try await send(line)
        return try await readReply()
    }

    /// Sends `line` and fails unless the reply is `OK`. Returns the reply's first line.
    @discardableResult
    func ok(_ line: String) async throws -> ServerLine {
        let reply = try await command(line)
        guard reply.header.kind == "OK" else {
            throw HarnessError("\(label): \(line.debugDescription) got \(reply.header.raw.debugDescription), expected OK")
        }
        return reply.header
    }

    /// Sends `PING <token>` and reads until its `OK PONG <token>`, returning every line before it.
    /// Because replies are in order, afterwards the daemon has handled all earlier lines of this client.
    func sync(_ token: String = "sync") async throws -> [String] {
        try await send(.ping(token))
        var before: [String] = []
        while true {
            let line = try await readLine()
            if line == "OK PONG \(token)" { return before }
            before.append(line)
        }
    }
}
