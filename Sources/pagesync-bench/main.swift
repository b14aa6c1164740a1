import ArgumentParser

/// `pagesync-bench`: benchmarks pagesyncd side by side with Redis pub/sub, NATS and a raw epoll
/// floor, with the same client, the same follower counts and the same payload size.
struct PagesyncBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pagesync-bench",
        abstract: "Benchmark pagesyncd against redis-server, nats-server and a raw epoll floor.",
        subcommands: [Run.self, InterleaveCommand.self, DurableCommand.self, JournalCommand.self, FloorServerCommand.self, FreePortCommand.self, DocumentsCommand.self, ReportCommand.self, WorkerCommand.self, MonitoringCommand.self, AudienceCommand.self, WslayFloorCommand.self, WebFloodCommand.self],
        defaultSubcommand: Run.self)
}

PagesyncBench.main()
