import ArgumentParser
import CWslay
#if canImport(Glibc)
import Glibc
#endif

/// `pagesync-bench wslay-floor`: what wslay itself holds per WebSocket, the floor under an idle
/// WebSocket member's cost: this process's anonymous memory before and after `--contexts`
/// server contexts (`wslay_event_context_server_init`, as the daemon makes one per member).
struct WslayFloorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wslay-floor",
        abstract: "Bytes wslay holds per WebSocket context (the floor under an idle WebSocket member).",
        discussion: "Row: wslay_context_bytes (RssAnon growth per context, n = --contexts).")

    @Option(help: "Contexts to make.") var contexts = 10_000
    @Option(help: "Label for the result row.") var label = "pagesyncd-ws"
    @Option(help: "Append the result row to this TSV file.") var out: String?

    func run() throws {
        let sink = ResultSink(label: label, path: out)
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { context, _, _, _, _ in
            wslay_event_set_error(context, WSLAY_ERR_WOULDBLOCK.rawValue)
            return -1
        }
        callbacks.send_callback = { _, _, length, _, _ in length }
        let pid = getpid()
        guard let before = ProcessProbe.statusKiB(pid: pid, field: "RssAnon") else { throw ValidationError("cannot read /proc/self/status") }
        var made: [OpaquePointer] = []
        made.reserveCapacity(contexts)
        for _ in 0..<contexts {
            var context: OpaquePointer?
            guard wslay_event_context_server_init(&context, &callbacks, nil) == 0, let context else { break }
            // Touched as a member's is when its first frame comes and goes (wslay's buffers
            // are part of the context, so its pages count from the start).
            _ = wslay_event_recv(context)
            made.append(context)
        }
        guard let after = ProcessProbe.statusKiB(pid: pid, field: "RssAnon"), !made.isEmpty else { throw ValidationError("no context made") }
        sink.add("wslay_context_bytes", n: made.count, Double(after - before) * 1024 / Double(made.count))
        for context in made { wslay_event_context_free(context) }
    }
}
