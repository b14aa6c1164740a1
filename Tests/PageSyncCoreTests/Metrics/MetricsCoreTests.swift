import PageSyncCore
import Testing

@Suite struct FixedHistogramTests {
    @Test func observationsLandInTheirBucketAndRenderCumulative() {
        var h = FixedHistogram(bounds: [10, 100, 1000], scale: 0.5)
        for value: UInt64 in [0, 10, 11, 100, 5000, 5000] { h.observe(value) }
        #expect(h.counts == [2, 2, 0, 2])
        #expect(h.count == 6)
        #expect(h.sum == 10121)
        #expect(h.scaledSum == 5060.5)
        let cumulative = h.cumulative
        #expect(cumulative.map(\.upperBound) == [5, 50, 500, .infinity])
        #expect(cumulative.map(\.count) == [2, 4, 4, 6])
    }

    @Test func theStockBuckets() {
        let seconds = FixedHistogram.seconds()
        #expect(seconds.bounds.first == 25_000 && seconds.bounds.last == 10_000_000_000)
        #expect(seconds.cumulative.first?.upperBound == 0.000025)
        #expect(FixedHistogram.sizes().bounds == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
    }

    @Test func observingAllocatesNothingOnceMade() {
        // The counts array is changed in place: its storage stays the same object.
        var h = FixedHistogram.seconds()
        let before = h.counts.withUnsafeBufferPointer { $0.baseAddress }
        for value in stride(from: UInt64(0), to: 20_000_000_000, by: 7_000_003) { h.observe(value) }
        #expect(h.counts.withUnsafeBufferPointer { $0.baseAddress } == before)
        #expect(h.count == h.counts.reduce(0, +))
    }
}

@Suite struct ServerMetricsTests {
    @Test func errorRepliesAreCountedByTheirCode() {
        var m = ServerMetrics()
        m.countIfError(Array("ERR 404 no room \"x\"\n".utf8))
        m.countIfError(Array("ERR 507 state not saved: disk full\n".utf8))
        m.countIfError(Array("ERR 507 state not saved: disk full\n".utf8))
        m.countIfError(Array("OK PONG\n".utf8))
        m.countIfError(Array("ERR 999 not ours\n".utf8))
        m.countIfError(Array("ERR 4".utf8))
        m.countIfError(Array("ERRATA 400\n".utf8))
        #expect(m.errors(.notFound) == 1)
        #expect(m.errors(.notSaved) == 2)
        #expect(ErrorCode.allCases.reduce(0) { $0 + m.errors($1) } == 3)
    }

    @Test func commandsAreCountedByVerb() {
        var m = ServerMetrics()
        for command: Command in [.navigate(.next, ifVersion: nil), .navigate(.next, ifVersion: 3), .navigate(.goto(PageNumber(2)!), ifVersion: nil),
                                 .text(nil), .textFrom(PageNumber(1)!, offset: 5), .info(.stats)] {
            m.count(CommandVerb(command))
        }
        #expect(m.commands(.next) == 2)
        #expect(m.commands(.goto) == 1)
        #expect(m.commands(.text) == 2)
        #expect(m.commands(.info) == 1)
        #expect(m.commands(.quit) == 0)
        #expect(CommandVerb.allCases.map(\.name).contains("prev"))
    }
}

@Suite struct InfoReplyTests {
    static func report() -> ServerReport {
        var r = ServerReport()
        r.processID = 4242
        r.uptimeSeconds = 61.9
        r.startTimeSeconds = 1_764_000_000.5
        r.residentBytes = 20 << 20
        r.cpuSeconds = 1.25
        r.listen = "127.0.0.1:7777"
        r.metricsListen = "127.0.0.1:9470"
        r.clientsTCP = 3
        r.clientsTLS = 1
        r.maxClients = 10_000
        r.roomCount = 3
        let state = RoomState(page: PageNumber(2)!, pageCount: 6, version: 9, by: "ann", doc: "c7025a42c4e4", epoch: Epoch(0x42))
        r.rooms = [ServerReport.Room(name: "guide", state: state, members: 4, changes: 9)]
        r.metrics.count(.next)
        r.metrics.count(error: .pastEnd)
        r.metrics.pageChanges = 9
        r.bytesIn = 100
        r.bytesOut = 2000
        r.engine = EngineStatistics(kind: .journal, durability: .batch)
        r.engine.synced(took: 123_456, failed: false)
        return r
    }

    @Test func oneSection() {
        let text = String(decoding: Wire.info(Self.report(), section: .server), as: UTF8.self)
        #expect(text == """
            OK INFO
            # Server
            version:\(PageSyncVersion.current)
            protocol:pagesync/1
            process_id:4242
            uptime_seconds:61
            start_time_seconds:1764000000
            resident_memory_bytes:20971520
            cpu_seconds:1.250000
            listen:127.0.0.1:7777
            tls_listen:-
            metrics_listen:127.0.0.1:9470
            .

            """)
    }

    @Test func everySectionInOrderWithAnEmptyLineBetween() throws {
        let lines = String(decoding: Wire.info(Self.report(), section: nil), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "OK INFO")
        #expect(lines.filter { $0.hasPrefix("# ") } == ["# Server", "# Clients", "# Rooms", "# Engine", "# Stats"])
        #expect(lines.contains("connected_clients:4"))
        #expect(lines.contains("rooms:3"))
        #expect(lines.contains("rooms_listed:1"))
        #expect(lines.contains("room_guide:page=2,pages=6,version=9,epoch=0000000000000042,members=4,changes=9"))
        #expect(lines.contains("engine:journal"))
        #expect(lines.contains("durability:batch"))
        #expect(lines.contains("accepting_changes:yes"))
        #expect(lines.contains("last_sync_seconds:0.000123"))
        #expect(lines.contains("command_next:1"))
        #expect(lines.contains("error_416:1"))
        #expect(lines.contains("errors:1"))
        #expect(lines.contains("page_changes:9"))
        #expect(lines.contains("bytes_out:2000"))
        let heading = try #require(lines.firstIndex(of: "# Clients"))
        #expect(lines[heading - 1] == "")
        // Every content line is a heading, empty, or field:value with a field of [a-z0-9_.-].
        for line in lines.dropFirst().dropLast(2) where !line.isEmpty && !line.hasPrefix("# ") {
            let parts = line.split(separator: ":", maxSplits: 1)
            #expect(parts.count == 2, "\(line)")
            #expect(parts[0].allSatisfy { $0.isLetter || $0.isNumber || "_.-".contains($0) }, "\(line)")
        }
        // A client reads it as one message.
        var assembler = ReplyAssembler()
        var message: ServerMessage?
        for line in lines.dropLast() { message = assembler.feed(String(line)) ?? message }
        guard case .multiline(let header, let content, false) = message else {
            Issue.record("not one multi-line message: \(String(describing: message))")
            return
        }
        #expect(header.words == ["INFO"])
        #expect(content.count == lines.count - 3)
    }

    @Test func aRefusingEngineSaysWhy() {
        var r = Self.report()
        r.refusal = "sync failed: Input/output error"
        r.engine = EngineStatistics(kind: .redis)
        let lines = InfoFields.lines(of: .engine, r)
        #expect(lines == ["# Engine", "engine:redis", "durability:-", "accepting_changes:no", "refusal:sync failed: Input/output error",
                          "groups:0", "groups_failed:0", "groups_pending:0", "redis_up:no", "redis_reconnects:0"])
    }

    @Test func secondsWithMicroseconds() {
        #expect(InfoFields.seconds(0) == "0.000000")
        #expect(InfoFields.seconds(1_499) == "0.000001")
        #expect(InfoFields.seconds(2_500_000_000) == "2.500000")
    }
}

@Suite struct LoopbackAddressTests {
    @Test func whichAddressesAreLoopback() {
        for text in ["127.0.0.1:7779", ":7779", "127.8.9.10:1", "[::1]:7779", "localhost:7779", "LOCALHOST:1"] {
            #expect(ListenAddress(parsing: text)?.isLoopback == true, "\(text)")
        }
        for text in ["0.0.0.0:7779", "[::]:7779", "192.0.2.7:7779", "127.example:1", "1270.0.0.1:1"] {
            #expect(ListenAddress(parsing: text)?.isLoopback == false, "\(text)")
        }
    }
}
