import PageSyncCore
import UV

/// The steps of printing the room's current page for a script: pure, tested through the
/// end-to-end tests. Lines in, actions out.
///
/// Greeting, then `JOIN <room>` if a room was asked for and the greeting is for another room,
/// then `TEXT` (the room's current page), then the content lines (dot-stuffing undone). A page
/// longer than the server sends at once (`truncated=yes`) is fetched on with `TEXT <n> FROM
/// <next>` until its end, each piece printed as it arrives, a line split between pieces joined
/// again. Then `QUIT`. Any `ERR` or an unexpected line ends it with status 1 and the server's
/// words; so does a page that is still cut (a server without `FROM`) or whose document changed
/// between pieces: nothing is ever cut silently.
struct PagePrintSteps {
    /// What the shell must do.
    enum Action: Equatable {
        /// Write this command to the server (``CommandEncoder/bytes(_:)``).
        case send(Command)
        /// Print these page lines to stdout.
        case print([String])
        /// Stop: exit with `status`, printing `message` (if any) to stderr.
        case finish(status: Int32, message: String?)
    }

    private enum Phase { case greeting, joining, header, content, done }
    private var phase = Phase.greeting
    private var content: [String] = []
    private let room: String?
    /// The page being printed, its document, and where the next piece starts (nil: this is the last).
    private var page: Int?
    private var doc: String?
    private var next: Int?
    private var splitLine = false
    /// The start of a line cut at the end of the previous piece.
    private var carry: String?

    /// Steps that print the page of `room` (nil: the server's default room).
    init(room: String?) { self.room = room }

    /// Whether the steps have ended.
    var isDone: Bool { phase == .done }

    /// Handles one server line (without its LF).
    mutating func handle(line: String) -> [Action] {
        switch phase {
        case .done:
            return []
        case .greeting:
            let wire = WireLine(parsing: line)
            guard let wire, wire.kind == .hello else { return fail(line) }
            if let room, wire.fields["room"] != room {
                phase = .joining
                return [.send(.join(room))]
            }
            phase = .header
            return [.send(Self.firstPiece(of: wire))]
        case .joining:
            guard let wire = WireLine(parsing: line), wire.kind == .ok, wire.words.first == "JOIN" else { return fail(line) }
            phase = .header
            return [.send(Self.firstPiece(of: wire))]
        case .header:
            guard let wire = WireLine(parsing: line), wire.kind == .ok, wire.words.first == "TEXT",
                  let number = wire.int("page") else { return fail(line) }
            let pieceDoc: String? = wire.fields["doc"].map { String($0) }
            if let page, page != number || doc != pieceDoc {
                phase = .done
                return [.print(content), .finish(status: 1, message: "pagesync: the document changed while it was being printed; the output is incomplete")]
            }
            page = number
            doc = pieceDoc
            splitLine = wire.yesNo("split") ?? false
            next = nil
            if wire.yesNo("truncated") == true {
                guard let n = wire.int("next") else {
                    phase = .done
                    let size = wire.int("bytes").map { " of \($0) bytes" } ?? ""
                    return [.finish(status: 1, message: "pagesync: page \(number)\(size) is longer than the server sends and it cannot send the rest; the output is cut")]
                }
                next = n
            }
            phase = .content
            return []
        case .content:
            guard let text = DotUnstuffer.unstuff(Substring(line)) else {
                return pieceEnded()
            }
            var l = String(text)
            if let c = carry { l = c + l; carry = nil }
            content.append(l)
            return []
        }
    }

    /// The `.` after a piece: print it, then ask for the next one or finish.
    private mutating func pieceEnded() -> [Action] {
        if splitLine, let last = content.popLast() { carry = last }
        let lines = content
        content = []
        guard let page, let next else {
            phase = .done
            return [.print(lines + (carry.map { [$0] } ?? [])), .send(.quit), .finish(status: 0, message: nil)]
        }
        phase = .header
        return [.print(lines), .send(.textFrom(PageNumber(page) ?? .first, offset: next))]
    }

    /// `TEXT <n> FROM 0` for the page a greeting (or `OK JOIN`) names, or `TEXT` (the room's
    /// page) when it names none.
    private static func firstPiece(of greeting: WireLine) -> Command {
        greeting.int("page").flatMap(PageNumber.init).map { .textFrom($0, offset: 0) } ?? .text(nil)
    }

    /// The connection ended or failed; `reason` says how.
    mutating func connectionEnded(reason: String, server: String) -> [Action] {
        guard phase != .done else { return [] }
        phase = .done
        return [.finish(status: 1, message: "pagesync: \(server): \(reason)")]
    }

    private mutating func fail(_ line: String) -> [Action] {
        phase = .done
        let said = WireLine(parsing: line).map { $0.kind == .error ? $0.words.joined(separator: " ") : line } ?? line
        return [.finish(status: 1, message: "pagesync: the server said: \(said)")]
    }
}

/// "Not a terminal" mode: connects, prints the room's current page to stdout and exits.
/// Loop thread only.
final class PagePrinter {
    private let loop: EventLoop
    private let configuration: PagerConfiguration
    private let connector: ServerConnector
    private var steps: PagePrintSteps
    private var framer = LineFramer(maxLineLength: PagerTimings.maxServerLineLength)
    private var connection: (any StreamConnection)?
    private let timeout: UV.Timer

    /// How long the server may stay silent before giving up.
    static let timeoutMilliseconds: UInt64 = 30_000

    /// How it ended (set once).
    private(set) var outcome: (status: Int32, message: String?)?

    /// Prepares; nothing happens until ``start()``.
    init(loop: EventLoop, configuration: PagerConfiguration, connector: ServerConnector) {
        self.loop = loop
        self.connector = connector
        self.configuration = configuration
        steps = PagePrintSteps(room: configuration.room)
        timeout = UV.Timer(loop: loop)
    }

    /// Connects and starts the exchange.
    func start() {
        armTimeout()
        connector.connect(loop: loop) {
            [unowned self] result in
            guard self.outcome == nil else {
                if case .success(let late) = result { late.close() }
                return
            }
            switch result {
            case .failure(let error):
                self.perform(self.steps.connectionEnded(reason: ServerConnector.explained("cannot connect: \(error)"), server: self.server))
            case .success(let connection):
                self.connection = connection
                connection.startReading { [unowned self] event in self.received(event) }
            }
        }
    }

    private var server: String { configuration.server.description }

    /// (Re)starts the silence timer: a long page arriving in many pieces is not a timeout.
    private func armTimeout() {
        timeout.start(afterMilliseconds: Self.timeoutMilliseconds) { [unowned self] in
            self.perform(self.steps.connectionEnded(reason: "no answer in time", server: self.server))
        }
    }

    private func received(_ event: TCPConnection.ReadEvent) {
        guard outcome == nil else { return }
        switch event {
        case .data(let bytes):
            armTimeout()
            framer.append(bytes)
            while outcome == nil, let frame = framer.next() {
                switch frame {
                case .line(let line): perform(steps.handle(line: String(decoding: line, as: UTF8.self)))
                case .tooLong: perform(steps.connectionEnded(reason: "a line from the server is too long", server: server))
                }
            }
        case .eof:
            perform(steps.connectionEnded(reason: "the server closed the connection", server: server))
        case .error(let error):
            perform(steps.connectionEnded(reason: ServerConnector.explained("\(error)"), server: server))
        }
    }

    private func perform(_ actions: [PagePrintSteps.Action]) {
        for action in actions {
            switch action {
            case .send(let command):
                connection?.write(CommandEncoder.bytes(command))
            case .print(let lines):
                var text = ""
                for line in lines { text += line + "\n" }
                FileDescriptorWriter.standardOutput.write(text)
            case .finish(let status, let message):
                outcome = (status, message)
                timeout.close()
                connection?.shutdownAndClose()
                connection = nil
                loop.stop()
                return
            }
        }
    }
}
