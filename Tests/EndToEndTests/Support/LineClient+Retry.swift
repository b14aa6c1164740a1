import Testing

extension LineClient {
    /// Sends `line` every 50 ms, at most `attempts` times, until it is answered `OK` (a change
    /// after an outage ends); returns that reply's first line, or nil if none came. With
    /// `refusal`, every other answer must be exactly that line (e.g. `ERR 503 state engine
    /// unavailable`): anything else is recorded as an issue.
    func retryUntilOK(_ line: String, attempts: Int = 400, refusal: String? = nil) async throws -> ServerLine? {
        for _ in 0..<attempts {
            let reply = try await command(line)
            if reply.header.kind == "OK" { return reply.header }
            if let refusal { #expect(reply.header.raw == refusal, "\(reply.header)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
}
