import PageSyncCore
import PageSyncPager
import UV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shell's fixed times and sizes (a generic class has no stored statics).
enum PagerTimings {
    /// The largest server line accepted: a `TEXT` content line can be as long as a page (1 MiB).
    static let maxServerLineLength = 1024 * 1024 + 4096
    static let escapeTimeoutMilliseconds: UInt64 = 50
    static let connectTimeoutMilliseconds: UInt64 = 5000
}

/// The interactive pager: wires a ``TerminalModel`` (the pager's ``PagerModel``, or the notes
/// view's ``NotesViewModel``) to the terminal, the server connection, timers and signals on one
/// libuv loop. Loop thread only.
///
/// Every event goes through the model; the model's effects are carried out here and nowhere
/// else. Repaints are coalesced: effects only mark the screen dirty, and one frame is written
/// right before the loop sleeps (a burst of server lines paints once).
///
/// Exit paths, each of which restores the terminal before the process ends: `q`/Ctrl-C
/// (the model's `.quit`), the first connection failing (the model's `.quit`), SIGTERM, SIGHUP,
/// SIGINT, the terminal going away, and any setup error after the terminal was entered.
final class InteractivePager<Model: TerminalModel> {
    /// The largest server line accepted: a `TEXT` content line can be as long as a page (1 MiB).
    static var maxServerLineLength: Int { PagerTimings.maxServerLineLength }
    /// How long a lone Esc waits for the rest of a possible escape sequence.
    static var escapeTimeoutMilliseconds: UInt64 { PagerTimings.escapeTimeoutMilliseconds }
    /// How long one connection attempt may take before it counts as failed, and then how long
    /// the server may take to greet (a server that accepts and stays silent is no pagesync server).
    static var connectTimeoutMilliseconds: UInt64 { PagerTimings.connectTimeoutMilliseconds }

    private let loop: EventLoop
    private let configuration: PagerConfiguration
    private let connector: ServerConnector
    private let terminal: Terminal
    private var model: Model
    private var decoder = KeyDecoder()
    private var framer = LineFramer(maxLineLength: InteractivePager.maxServerLineLength)

    private let escapeTimer: UV.Timer
    private let reconnectTimer: UV.Timer
    private let connectTimeout: UV.Timer
    private let clockTimer: UV.Timer
    private var beforeSleep: PrepareHook?
    private var signals: [SignalWatcher] = []

    private var connection: (any StreamConnection)?
    /// Bumped whenever a connection (or an attempt) is abandoned: late callbacks of older
    /// attempts see a different number and do nothing.
    private var generation = 0
    private enum Dirty: Comparable { case clean, repaint, clear }
    private var dirty = Dirty.clean
    private var suspended = false

    /// How the pager ended (set once).
    private(set) var outcome: (status: Int32, message: String?)?

    /// Prepares the pager; nothing is written to the terminal yet.
    init(loop: EventLoop, configuration: PagerConfiguration, connector: ServerConnector,
         model makeModel: (PagerOptions) -> Model) throws(PagerShellError) {
        self.loop = loop
        self.connector = connector
        self.configuration = configuration
        terminal = try Terminal(loop: loop)
        var seed: UInt64 = 0
        withUnsafeMutableBytes(of: &seed) { _ = getentropy($0.baseAddress, $0.count) }
        var options = PagerOptions(
            room: configuration.room, name: configuration.name, token: configuration.token,
            server: configuration.server.description, size: terminal.size,
            quitIfFirstConnectionFails: true, randomSeed: seed, followOnly: configuration.followOnly,
            colors: ColorPolicy.from(noColor: getenv("NO_COLOR").map { String(cString: $0) },
                                     term: getenv("TERM").map { String(cString: $0) }))
        options.markdown = configuration.markdown.map { $0 ? .always : .never } ?? .auto
        options.lineNumbers = configuration.lineNumbers
        // The warning on stderr is hidden by the alternate screen at once: the status line keeps saying it.
        options.unverifiedTLS = ServerConnector.insecureWarning(configuration) != nil
        model = makeModel(options)
        escapeTimer = UV.Timer(loop: loop)
        clockTimer = UV.Timer(loop: loop)
        reconnectTimer = UV.Timer(loop: loop)
        connectTimeout = UV.Timer(loop: loop)
    }

    /// Enters the terminal, installs the signal watchers and starts connecting. On failure the
    /// pager has already finished (``outcome`` is set) and the loop was stopped.
    func start() {
        do {
            for signal in [SIGWINCH, SIGCONT, SIGTSTP, SIGTERM, SIGHUP, SIGINT] {
                signals.append(try SignalWatcher(loop: loop, signal: signal) { [unowned self] in self.signaled(signal) })
            }
        } catch {
            finish(status: 1, message: "pagesync: cannot watch signals: \(error)")
            return
        }
        do {
            try terminal.enter()
        } catch {
            finish(status: 1, message: error.description)
            return
        }
        beforeSleep = PrepareHook(loop: loop) { [unowned self] in self.paintIfDirty() }
        terminal.startReading({ [unowned self] bytes in self.typed(bytes) },
                              onEnd: { [unowned self] reason in self.finish(status: 1, message: "pagesync: \(reason)") })
        dirty = .clear
        if let every = model.tickMilliseconds {
            tick()
            clockTimer.start(afterMilliseconds: every, repeatMilliseconds: every) { [unowned self] in self.tick() }
        }
        connect(afterMilliseconds: 0)
    }

    /// Reports the time to a model that shows it (the notes view's timer and clock).
    private func tick() {
        guard outcome == nil else { return }
        var now = time(nil)
        var local = tm()
        localtime_r(&now, &local)
        let reading = ClockReading(monotonicMilliseconds: MonotonicClock.milliseconds(), hour: Int(local.tm_hour), minute: Int(local.tm_min))
        apply(model.handle(.tick(reading)))
    }

    // MARK: Effects

    private func apply(_ effects: [PagerEffect]) {
        for effect in effects {
            guard outcome == nil else { return }
            switch effect {
            case .send(let command):
                connection?.write(CommandEncoder.bytes(command))
            case .connect(let delay):
                connect(afterMilliseconds: delay)
            case .repaint:
                dirty = max(dirty, .repaint)
            case .clearAndRepaint:
                dirty = .clear
            case .suspend:
                suspend()
            case .quit(let status, let message):
                finish(status: status, message: message)
            }
        }
    }

    private func paintIfDirty() {
        guard outcome == nil, !suspended, terminal.isEntered, dirty != .clean else { return }
        let frame = model.frame()
        terminal.write(dirty == .clear ? TerminalControl.clearScreen + frame : frame)
        dirty = .clean
    }

    // MARK: Keys

    private func typed(_ bytes: UnsafeRawBufferPointer) {
        guard outcome == nil else { return }
        for key in decoder.feed(bytes) {
            apply(model.handle(.key(key)))
            guard outcome == nil else { return }
        }
        if decoder.needsTimeout {
            escapeTimer.start(afterMilliseconds: Self.escapeTimeoutMilliseconds) { [unowned self] in
                for key in self.decoder.timeout() {
                    self.apply(self.model.handle(.key(key)))
                    guard self.outcome == nil else { return }
                }
            }
        } else {
            escapeTimer.stop()
        }
    }

    // MARK: Connection

    /// Abandons the current connection (if any) and connects again after `delay` milliseconds.
    private func connect(afterMilliseconds delay: Int) {
        abandonConnection()
        if delay <= 0 {
            connectNow()
        } else {
            reconnectTimer.start(afterMilliseconds: UInt64(delay)) { [unowned self] in self.connectNow() }
        }
    }

    private func abandonConnection() {
        generation += 1
        connection?.close()
        connection = nil
        reconnectTimer.stop()
        connectTimeout.stop()
    }

    private func connectNow() {
        guard outcome == nil else { return }
        generation += 1
        let attempt = generation
        connectTimeout.start(afterMilliseconds: Self.connectTimeoutMilliseconds) { [unowned self] in
            guard attempt == self.generation else { return }
            self.lost(reason: "connecting timed out")
        }
        connector.connect(loop: loop) {
            [unowned self] result in
            guard attempt == self.generation, self.outcome == nil else {
                if case .success(let late) = result { late.close() }
                return
            }
            self.connectTimeout.stop()
            switch result {
            case .failure(let error):
                self.generation += 1
                self.apply(self.model.handle(.disconnected(reason: Self.reason(error))))
            case .success(let connection):
                self.connection = connection
                self.framer = LineFramer(maxLineLength: Self.maxServerLineLength)
                connection.setNoDelay(true)
                connection.setKeepAlive(seconds: 30)
                self.connectTimeout.start(afterMilliseconds: Self.connectTimeoutMilliseconds) { [unowned self] in
                    guard attempt == self.generation else { return }
                    self.lost(reason: "no greeting within \(Self.connectTimeoutMilliseconds / 1000) s: is it a pagesync server?")
                }
                self.apply(self.model.handle(.connected))
                connection.startReading { [unowned self] event in self.received(event, attempt: attempt) }
            }
        }
    }

    private func received(_ event: TCPConnection.ReadEvent, attempt: Int) {
        guard attempt == generation, outcome == nil else { return }
        switch event {
        case .data(let bytes):
            framer.append(bytes)
            while attempt == generation, outcome == nil, let frame = framer.next() {
                if case .line(let line) = frame {
                    apply(model.handle(.serverLine(String(decoding: line, as: UTF8.self))))
                }
            }
            if attempt == generation, model.connection == .connected { connectTimeout.stop() }  // greeted
        case .eof:
            lost(reason: "the server closed the connection")
        case .error(let error):
            lost(reason: Self.reason(error))
        }
    }

    private func lost(reason: String) {
        abandonConnection()
        apply(model.handle(.disconnected(reason: reason)))
    }

    /// "connection refused" from "ECONNREFUSED: connection refused".
    private static func reason(_ error: UVError) -> String {
        let text = error.description
        if let colon = text.firstIndex(of: ":"), text[..<colon] == error.name {
            return ServerConnector.explained(String(text[text.index(after: colon)...]).trimmingBlanks)
        }
        return ServerConnector.explained(text)
    }

    // MARK: Signals

    private func signaled(_ signal: Int32) {
        switch signal {
        case SIGWINCH: resized()
        case SIGCONT: continued()
        case SIGTSTP: suspend()  // from outside (`kill -TSTP`): the same as Ctrl-Z
        default: finish(status: 128 + signal, message: nil)  // SIGTERM, SIGHUP, SIGINT
        }
    }

    private func resized() {
        guard outcome == nil, !suspended else { return }
        let size = terminal.size
        if size != model.size { apply(model.handle(.resized(size))) }
    }

    /// Ctrl-Z: restore the terminal first, then stop; ``continued()`` undoes it.
    private func suspend() {
        guard outcome == nil, !suspended else { return }
        escapeTimer.stop()
        terminal.leave()
        suspended = true
        raise(SIGSTOP)
    }

    /// SIGCONT: back to raw mode and the alternate screen, full repaint.
    private func continued() {
        guard outcome == nil else { return }
        suspended = false
        do {
            try terminal.enter()
        } catch {
            finish(status: 1, message: error.description)
            return
        }
        let size = terminal.size
        if size != model.size { apply(model.handle(.resized(size))) }
        apply(model.handle(.resumed))
    }

    // MARK: The end

    /// Restores the terminal, closes everything and stops the loop. Only the first call counts.
    private func finish(status: Int32, message: String?) {
        guard outcome == nil else { return }
        outcome = (status, message)
        terminal.leave()
        abandonConnection()
        escapeTimer.close()
        reconnectTimer.close()
        connectTimeout.close()
        clockTimer.close()
        beforeSleep?.close()
        signals.forEach { $0.close() }
        signals = []
        terminal.close()
        loop.stop()
    }
}
