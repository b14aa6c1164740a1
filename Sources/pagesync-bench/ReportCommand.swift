import ArgumentParser

/// `pagesync-bench report`: turns result files (one per run) into a markdown table of medians,
/// with the ratios primary/redis, primary/nats and primary/floor computed within each run and
/// then taken as a median.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print a markdown table (medians over runs, ratios from the same run) from result TSV files.")

    @Argument(help: "Result TSV files, one per run.") var files: [String]
    @Option(help: "The label the ratios are computed for.") var primary = "pagesyncd"
    @Option(help: "Column order (labels not listed follow).") var columns = "pagesyncd,pagesyncd-tls,pagesyncd-ws,pagesyncd-always,pre-nofsync,pre-fsync,redis,nats,floor"
    @Option(name: .customLong("ratio-labels"), help: "Labels whose fan-out p50/p99 and idle RSS are also given as ratios to redis and the floor (a second table), comma-separated.") var ratioLabelsOption = "pagesyncd,pagesyncd-always,pre-nofsync,pre-fsync"
    @Option(name: .customLong("durable-columns"), help: "Column order of the durable-throughput table.") var durableColumns = "pagesyncd,pre-fsync,pagesyncd-always,redis,redis-always"
    @Option(name: .customLong("fanout-pairs"), help: "Fan-out p50/p99 ratios between two labels, as a/b pairs, comma-separated (a third table; none by default).") var fanoutPairs = ""
    @Option(name: .customLong("durable-ratios"), help: "Ratios of the durable-throughput table, as a/b pairs, comma-separated.") var durableRatios = "pagesyncd/redis,pre-fsync/redis,pagesyncd-always/redis-always,pagesyncd/pre-fsync"
    @Option(name: .customLong("durable-rounds"), parsing: .upToNextOption,
            help: "Result TSV files of the durable phase, one per round (every target once, one after another): the durable table's medians and ratios are taken over these rounds rather than over the runs.")
    var durableRoundFiles: [String] = []
    @Flag(help: "First a table of the goals scripts/bench measures (issues 10, 11, 12, 15, 38 and 41), each with this run's figure and whether it is met.")
    var goals = false

    /// The metric of one change's fan-out latency (µs), a row per change; pooled, not a median.
    static let sampleMetric = "fanout_sample_us"
    /// The same until the first follower had the change (`ResultSink.addFanoutLatency` with
    /// `firstSamples`; `run` does not write it).
    static let firstSampleMetric = "fanout_first_sample_us"
    /// The metric family of `interleave` (a prefix): its rows go to a table of their own.
    static let interleavedFamily = "interleaved_"

    struct Key: Hashable, Comparable {
        var metric: String, n: Int
        static func < (a: Key, b: Key) -> Bool {
            let ra = ReportCommand.rank(a.metric), rb = ReportCommand.rank(b.metric)
            if ra != rb { return ra < rb }
            if a.metric != b.metric { return a.metric < b.metric }
            return a.n < b.n
        }
    }

    static let order: [(String, String)] = [
        ("fanout_p50_us", "fan-out p50 (µs)"), ("fanout_p90_us", "fan-out p90 (µs)"),
        ("fanout_p99_us", "fan-out p99 (µs)"), ("fanout_max_us", "fan-out max (µs)"),
        ("fanout_first_p50_us", "first follower reached p50 (µs)"), ("fanout_first_p99_us", "first follower reached p99 (µs)"),
        ("throughput_dps", "fan-out throughput (deliveries/s)"), ("delivered_pct", "delivered (% of N×M)"),
        ("throughput_cps", "changes/s until every follower has the last one"),
        ("paced_dps", "paced throughput, 1 change in flight (deliveries/s)"), ("paced_delivered_pct", "paced: delivered (% of N×M)"),
        ("rtt_p50_us", "round trip p50 (µs)"), ("rtt_p99_us", "round trip p99 (µs)"),
        ("mem_per_conn_bytes", "RSS per idle connection (bytes)"),
        ("idle_ready", "idle clients held"), ("idle_mem_per_conn_bytes", "RSS per idle client (bytes)"),
        ("idle_pongs", "idle clients that answered a PING"), ("idle_open_errors", "errors opening idle clients"),
        ("max_clients_attempted", "max clients: attempted"), ("max_clients_held", "max clients: held"),
        ("max_clients_errors", "max clients: errors"),
        ("churn_cps", "churn (connect+ping+close /s)"), ("churn_errors", "churn errors"),
        ("churn_rss_delta_kib", "RSS after churn − before (KiB)"), ("churn_fd_delta", "fds after churn − before"),
        ("open_errors", "errors opening followers"), ("fanout_errors", "fan-out phase errors"),
        ("throughput_errors", "throughput phase errors"), ("paced_errors", "paced phase errors"), ("driver_errors", "driver ERR replies"),
        ("payload_bytes", "bytes per delivery (payload)"), ("failed", "bench failed (runs)"),
        ("doc_open_ms", "document: open+index until listening (ms)"), ("doc_hwm_mib", "document: peak RSS VmHWM (MiB)"),
        ("doc_text_p50_us", "document: TEXT middle page p50 (µs)"), ("doc_text_p99_us", "document: TEXT middle page p99 (µs)"),
        ("start_empty_ms", "start on an empty state dir: exec until listening (ms)"),
        ("start_empty_cpu_ms", "start on an empty state dir: daemon CPU until listening (ms)"),
        ("recovery_ms", "recovery: exec until listening, median (ms)"), ("recovery_max_ms", "recovery: exec until listening, slowest (ms)"),
        ("recovery_cpu_ms", "recovery: daemon CPU until listening, median (ms)"),
        ("recovery_journal_mib", "recovery: journal size (MiB)"), ("recovery_version_ok", "recovery: versions came back right (1 = yes)"),
        ("pipelined_cps", "pipelined changes/s on one connection (batch)"),
        ("diskuse_bytes", "state dir after the last change (bytes)"), ("diskuse_settled_bytes", "state dir 2 s later (bytes)"),
        ("diskuse_stopped_bytes", "state dir after a clean stop (bytes)"), ("diskuse_errors", "ERR replies while filling"),
        ("durable_cps", "durable changes/s"), ("durable_p50_us", "durable change p50 (µs)"),
        ("durable_p99_us", "durable change p99 (µs)"), ("durable_errors", "durable ERR replies"), ("durable_failed", "durable bench failed"),
        ("info_p50_us", "INFO p50 (µs)"), ("info_p99_us", "INFO p99 (µs)"), ("info_max_us", "INFO max (µs)"),
        ("ping_p99_us", "PING p99 beside INFO (µs)"), ("info_load_cps", "changes/s of the load beside INFO"),
        ("scrape_p50_us", "GET /metrics p50 (µs)"), ("scrape_p99_us", "GET /metrics p99 (µs)"), ("scrape_max_us", "GET /metrics max (µs)"),
        ("scrape_loop_p50_us", "/metrics rendering, loop time p50 (µs)"), ("scrape_loop_p99_us", "/metrics rendering, loop time p99 (µs)"),
        ("scrape_loop_max_us", "/metrics rendering, loop time max (µs)"), ("scrape_bytes", "/metrics body (bytes)"),
        ("change_p99_us", "NEXT to its PAGE p99 (µs)"), ("change_scraping_p99_us", "NEXT to its PAGE p99 while scraping (µs)"),
        ("storm_ping_alone_p99_us", "PING p99 alone (µs)"), ("storm_ping_p99_us", "PING p99 during scrape storms (µs)"),
        ("storm_answered", "storm scrapes answered 200"), ("storm_refused", "storm scrapes answered 503"),
        ("storm_closed", "storm scrapes closed unanswered"), ("storm_lost", "storm scrapes neither answered nor closed"),
    ]

    static func rank(_ metric: String) -> Int { order.firstIndex { $0.0 == metric } ?? order.count }

    static func title(_ key: Key) -> String {
        let name = order.first { $0.0 == key.metric }?.1 ?? key.metric
        guard key.n > 0 else { return name }
        if key.metric.hasPrefix("doc_") { return "\(name), \(key.n) MiB" }
        if key.metric.hasPrefix("recovery_") { return "\(name), \(groupThousands(key.n)) records" }
        if key.metric.hasPrefix("diskuse_") || key.metric == "pipelined_cps" { return "\(name), \(groupThousands(key.n)) changes" }
        if key.metric.hasPrefix("start_empty") { return "\(name), \(key.n) rooms" }
        if key.metric.hasPrefix("durable_") { return "\(name), \(key.n) client\(key.n == 1 ? "" : "s")" }
        if key.metric.hasPrefix("info_") || key.metric == "ping_p99_us" { return "\(name), \(key.n) clients changing rooms" }
        if key.metric.hasPrefix("scrape_") || key.metric.hasPrefix("change_") { return "\(name), \(groupThousands(key.n)) clients connected" }
        if key.metric.hasPrefix("storm_") { return "\(name), \(groupThousands(key.n)) scrapes at once" }
        return "\(name), N=\(key.n)"
    }

    func run() throws {
        // runs[file][label][key] = value
        var runs: [[String: [Key: Double]]] = []
        var skipped: [String: String] = [:]
        var labels: [String] = []
        // samples[label][n]: every change's fan-out latency, over all runs.
        var samples: [String: [Int: [Double]]] = [:]
        var interleaved = Interleaved()
        for file in files {
            guard let text = ProcessProbe.readSmallFile(file) else { continue }
            var run: [String: [Key: Double]] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard parts.count >= 4 else { continue }
                let label = String(parts[0])
                if parts[1] == "skipped" { skipped[label] = parts.count > 4 ? String(parts[4]) : "skipped"; if !labels.contains(label) { labels.append(label) }; continue }
                guard let (n, value) = Self.numbers(parts) else { continue }
                if parts[1].hasPrefix(Self.interleavedFamily) {
                    interleaved.add(label: label, metric: parts[1].dropFirst(Self.interleavedFamily.count), n: n, value: value, run: runs.count + 1)
                    continue
                }
                if parts[1] == Self.sampleMetric {
                    samples[label, default: [:]][n, default: []].append(value)
                    continue
                }
                run[label, default: [:]][Key(metric: String(parts[1]), n: n)] = value
                if !labels.contains(label) { labels.append(label) }
            }
            runs.append(run)
        }
        let allLabels = labels
        func isDurable(_ key: Key) -> Bool { key.metric.hasPrefix("durable_") }
        var keys = Set<Key>()
        var mainLabels = Set<String>()
        for run in runs {
            for (label, values) in run {
                let main = values.keys.filter { !isDurable($0) }
                keys.formUnion(main)
                if !main.isEmpty { mainLabels.insert(label) }
            }
        }
        labels = labels.filter { mainLabels.contains($0) || (skipped[$0] != nil && $0 != "redis-always") }
        let preferred = columns.split(separator: ",").map(String.init)
        labels = preferred.filter { labels.contains($0) } + labels.filter { !preferred.contains($0) }
        let ratioLabels = ["redis", "nats", "floor"].filter { labels.contains($0) && skipped[$0] == nil }

        if goals {
            let unit = durableRoundFiles.isEmpty ? "run" : "round"
            BenchGoals(runs: runs, durable: durableRoundFiles.isEmpty ? runs : durableRoundFiles.map(Self.readRound), durableUnit: unit,
                       pooled: samples, interleaved: interleaved.samples).printTable()
            print("")
            print("#### Every figure")
            print("")
        }
        printTable(runs, keys: keys, columns: labels, ratios: ratioLabels.map { (primary, $0) }, skipped: skipped)
        if !skipped.isEmpty {
            print("")
            for (label, reason) in skipped.sorted(by: { $0.key < $1.key }) { print("- \(label): skipped (\(reason))") }
        }
        print("")
        print("Medians over \(runs.count) run(s); each ratio is computed within one run, then the median is taken.")
        printFanoutRatios(runs, keys: keys)
        printPooledFanout(samples, runs: runs.count, labels: labels)
        printInterleaved(interleaved, runs: runs.count)
        printFanoutPairs(runs, keys: keys)
        if durableRoundFiles.isEmpty {
            printDurable(runs, labels: allLabels, skipped: skipped, over: "run")
        } else {
            printDurable(durableRoundFiles.map(Self.readRound), labels: allLabels, skipped: skipped, over: "round")
        }
    }

    /// A row's client or follower count and value (`label metric n value`), if both are numbers.
    static func numbers(_ parts: [Substring]) -> (n: Int, value: Double)? {
        guard let n = Int(parts[2]), let value = Double(parts[3]) else { return nil }
        return (n, value)
    }

    /// One round of the durable phase: its rows by label (an unreadable file is an empty round).
    static func readRound(_ file: String) -> [String: [Key: Double]] {
        var round: [String: [Key: Double]] = [:]
        for line in (ProcessProbe.readSmallFile(file) ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard parts.count >= 4, let (n, value) = numbers(parts) else { continue }
            round[String(parts[0]), default: [:]][Key(metric: String(parts[1]), n: n)] = value
        }
        return round
    }

    /// A markdown table (nothing without `keys`): a row per key in order, a column per label in
    /// `columns` (the median over `runs`, or `skipped`), then a column per pair in `ratios`
    /// (``ratio(_:_:_:_:)``).
    private func printTable(_ runs: [[String: [Key: Double]]], keys: Set<Key>, columns: [String], ratios: [(String, String)],
                            skipped: [String: String]) {
        guard !keys.isEmpty else { return }
        var header = "| metric | " + columns.joined(separator: " | ") + " |"
        var rule = "| --- |" + String(repeating: " ---: |", count: columns.count)
        for (a, b) in ratios { header += " \(a)/\(b) |"; rule += " ---: |" }
        print(header)
        print(rule)
        for key in keys.sorted() {
            var row = "| \(ReportCommand.title(key)) |"
            for label in columns {
                if skipped[label] != nil { row += " skipped |"; continue }
                let values = runs.compactMap { $0[label]?[key] }
                row += " \(median(values).map { ReportCommand.show($0) } ?? "–") |"
            }
            for (a, b) in ratios { row += " \(ratio(runs, a, b, key)) |" }
            print(row)
        }
    }

    /// Within-run ratio of `a` to `b` for `key`, median over runs.
    private func ratio(_ runs: [[String: [Key: Double]]], _ a: String, _ b: String, _ key: Key) -> String {
        let ratios = runs.compactMap { run -> Double? in
            guard let x = run[a]?[key], let y = run[b]?[key], y != 0 else { return nil }
            return x / y
        }
        return median(ratios).map { fmt($0, 2) } ?? "–"
    }

    /// Fan-out p50/p99 and idle RSS of each pagesyncd build and mode, as ratios to redis and the floor.
    private func printFanoutRatios(_ runs: [[String: [Key: Double]]], keys: Set<Key>) {
        let present = Set(runs.flatMap { $0.keys })
        let subjects = ratioLabelsOption.split(separator: ",").map(String.init).filter { present.contains($0) }
        let references = ["redis", "floor"].filter { present.contains($0) }
        let rows = keys.filter { ["fanout_p50_us", "fanout_p99_us", "fanout_first_p50_us", "mem_per_conn_bytes"].contains($0.metric) }.sorted()
        guard !subjects.isEmpty, !references.isEmpty, !rows.isEmpty else { return }
        print("")
        print("#### Fan-out ratios (each within one run, then the median)")
        print("")
        var header = "| metric |", rule = "| --- |"
        for s in subjects { for r in references { header += " \(s)/\(r) |"; rule += " ---: |" } }
        print(header)
        print(rule)
        for key in rows {
            var row = "| \(ReportCommand.title(key)) |"
            for s in subjects { for r in references { row += " \(ratio(runs, s, r, key)) |" } }
            print(row)
        }
    }

    /// Fan-out latency percentiles over every change of every run, and their ratios. A run's
    /// p99 over 190 changes is its second slowest change, and one preemption of one process
    /// moves it by half; over the runs' pooled changes it is the sixth slowest of 570, and the
    /// runs interleave the targets, so every target's sample spans the same stretches of load.
    private func printPooledFanout(_ samples: [String: [Int: [Double]]], runs: Int, labels: [String]) {
        printPooled(heading: "Fan-out over every change of all \(runs) run(s) (pooled percentiles)", suffix: ", pooled", countSuffix: "",
                    series: [("fan-out", samples, [("p50", \.p50), ("p90", \.p90), ("p99", \.p99)])],
                    labels: labels.filter { samples[$0] != nil })
    }

    /// What `interleave` wrote (metric family `interleaved_`), over all runs.
    struct Interleaved {
        /// Every change's latency until the last follower had it, and until the first: [label][n].
        var samples: [String: [Int: [Double]]] = [:]
        var firstSamples: [String: [Int: [Double]]] = [:]
        /// Labels in the order first seen.
        var labels: [String] = []
        /// Errors and failures: "label: what, N=n (run r)".
        var notes: [String] = []

        mutating func add(label: String, metric: Substring, n: Int, value: Double, run: Int) {
            if !labels.contains(label) { labels.append(label) }
            let at = n > 0 ? ", N=\(n)" : ""
            switch metric {
            case ReportCommand.sampleMetric: samples[label, default: [:]][n, default: []].append(value)
            case ReportCommand.firstSampleMetric: firstSamples[label, default: [:]][n, default: []].append(value)
            case "open_errors": notes.append("\(label): \(ReportCommand.show(value)) error(s) opening followers\(at) (run \(run))")
            case "fanout_errors": notes.append("\(label): the interleaved changes stopped early\(at) (run \(run))")
            case "failed": notes.append("\(label): the interleaved phase failed (run \(run))")
            default: break  // per-run percentiles: the table pools the samples instead
            }
        }
    }

    /// "Fan-out, interleaved change by change": `interleave` measured every target in the same
    /// rounds (change r to each target in turn), so a stretch of background load falls on all of
    /// them; percentiles over every change of every run, ratios of the pooled figures.
    private func printInterleaved(_ interleaved: Interleaved, runs: Int) {
        let preferred = columns.split(separator: ",").map(String.init)
        let present = interleaved.labels.filter { interleaved.samples[$0] != nil }
        let labels = preferred.filter { present.contains($0) } + present.filter { !preferred.contains($0) }
        printPooled(heading: "Fan-out, interleaved change by change (every change of all \(runs) run(s), pooled)",
                    suffix: ", interleaved", countSuffix: ", interleaved",
                    series: [("fan-out", interleaved.samples, [("p50", \.p50), ("p90", \.p90), ("p99", \.p99)]),
                             ("first follower reached", interleaved.firstSamples, [("p50", \.p50), ("p99", \.p99)])],
                    labels: labels)
        guard !interleaved.notes.isEmpty else { return }
        if labels.isEmpty {
            print("")
            print("#### Fan-out, interleaved change by change")
        }
        print("")
        for note in interleaved.notes { print("- \(note)") }
    }

    /// A table of percentiles over pooled samples: for each N, a row per series and percentile
    /// ("<name> p99 (µs), N=1000<suffix>") with a column per label and the ratios of each
    /// `--ratio-labels` label to redis and the floor, then the number of changes of the first
    /// series. Nothing when no label has samples.
    private func printPooled(heading: String, suffix: String, countSuffix: String,
                             series: [(name: String, samples: [String: [Int: [Double]]], metrics: [(String, KeyPath<Percentiles, Double>)])],
                             labels columns: [String]) {
        guard let main = series.first else { return }
        let subjects = ratioLabelsOption.split(separator: ",").map(String.init).filter { main.samples[$0] != nil }
        let references = ["redis", "floor"].filter { main.samples[$0] != nil }
        let counts = Set(main.samples.values.flatMap(\.keys)).sorted()
        guard !columns.isEmpty, !counts.isEmpty else { return }
        print("")
        print("#### \(heading)")
        print("")
        var header = "| metric | " + columns.joined(separator: " | ") + " |"
        var rule = "| --- |" + String(repeating: " ---: |", count: columns.count)
        let pairs = subjects.flatMap { s in references.map { (s, $0) } }
        for (s, r) in pairs { header += " \(s)/\(r) |"; rule += " ---: |" }
        print(header)
        print(rule)
        for n in counts {
            for (name, samples, metrics) in series {
                let pooled: [String: Percentiles] = samples.compactMapValues { $0[n].flatMap { Percentiles($0) } }
                for (metric, path) in metrics {
                    var row = "| \(name) \(metric) (µs), N=\(n)\(suffix) |"
                    for label in columns { row += " \(pooled[label].map { ReportCommand.show($0[keyPath: path]) } ?? "–") |" }
                    for (s, r) in pairs {
                        let ratio = pooled[s].flatMap { a in pooled[r].map { a[keyPath: path] / $0[keyPath: path] } }
                        row += " \(ratio.map { fmt($0, 2) } ?? "–") |"
                    }
                    print(row)
                }
            }
            var row = "| changes measured, N=\(n)\(countSuffix) |"
            for label in columns { row += " \(main.samples[label]?[n]?.count ?? 0) |" }
            print(row + String(repeating: " |", count: pairs.count))
        }
    }

    /// Fan-out latency of one label against another (`--fanout-pairs`), within each run.
    private func printFanoutPairs(_ runs: [[String: [Key: Double]]], keys: Set<Key>) {
        let present = Set(runs.flatMap { $0.keys })
        let pairs: [(String, String)] = fanoutPairs.split(separator: ",").compactMap { pair in
            let parts = pair.split(separator: "/").map(String.init)
            guard parts.count == 2, present.contains(parts[0]), present.contains(parts[1]) else { return nil }
            return (parts[0], parts[1])
        }
        let rows = keys.filter { ["fanout_p50_us", "fanout_p99_us", "fanout_first_p50_us", "throughput_dps"].contains($0.metric) }.sorted()
        guard !pairs.isEmpty, !rows.isEmpty else { return }
        print("")
        print("#### Fan-out pairs (each within one run, then the median)")
        print("")
        var header = "| metric |", rule = "| --- |"
        for (a, b) in pairs { header += " \(a)/\(b) |"; rule += " ---: |" }
        print(header)
        print(rule)
        for key in rows {
            var row = "| \(ReportCommand.title(key)) |"
            for (a, b) in pairs { row += " \(ratio(runs, a, b, key)) |" }
            print(row)
        }
    }

    /// The durable-throughput table: changes/s and latency per client count, with the ratios,
    /// medians over `runs`: the runs, or the rounds of the durable phase (`over` names which).
    private func printDurable(_ runs: [[String: [Key: Double]]], labels: [String], skipped: [String: String], over unit: String) {
        var keys = Set<Key>()
        for run in runs { for (_, values) in run { keys.formUnion(values.keys.filter { $0.metric.hasPrefix("durable_") }) } }
        guard !keys.isEmpty else { return }
        let preferred = durableColumns.split(separator: ",").map(String.init)
        // A durable-only target (redis-always) appears in the durable rows alone.
        let present = Set(labels).union(runs.flatMap(\.keys))
        let columns = preferred.filter { present.contains($0) }
        let pairs: [(String, String)] = durableRatios.split(separator: ",").compactMap { pair in
            let parts = pair.split(separator: "/").map(String.init)
            guard parts.count == 2, columns.contains(parts[0]), columns.contains(parts[1]) else { return nil }
            return (parts[0], parts[1])
        }
        print("")
        print("#### Durable throughput (closed loop, one client per room, one change in flight each)")
        print("")
        printTable(runs, keys: keys, columns: columns, ratios: pairs, skipped: skipped)
        // Rounds are per client count, so a row has as many figures as the rounds of its count.
        let perRow = keys.map { key in runs.filter { run in run.values.contains { $0[key] != nil } }.count }.max() ?? 0
        print("")
        print("Medians over \(perRow) \(unit)(s) per row; each ratio is computed within one \(unit), then the median is taken.")
    }

    static func show(_ value: Double) -> String {
        if abs(value) >= 1000 { return groupThousands(Int(value.rounded())) }
        if value == value.rounded() { return String(Int(value)) }
        return fmt(value, 1)
    }

    static func groupThousands(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + out
    }
}
