/// One connection of an ``HTTPServer``: reads request heads, asks the server's handler, writes
/// the answers, and carries out what ``HTTPConnectionState`` decides. Loop thread only.
final class HTTPServerConnection {
    /// Plain TCP, or what the server's `wrap` made of it (TLS): a closing answer half-closes it
    /// (``StreamConnection/shutdownWrites()``).
    let connection: any StreamConnection
    private unowned let server: HTTPServer
    private(set) var state: HTTPConnectionState
    private let parser = HTTPHeadParser()
    /// Bytes read and not parsed yet, from `pendingStart` on: at most one read's worth, since
    /// reading stops while an answer waits to leave.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var inputEnded = false
    /// Answers written in the current read callback: past ``answersPerTurn`` the rest waits
    /// for the next loop turn, so a pipelining client cannot hold the loop.
    private var answersThisTurn = 0
    private static let answersPerTurn = 16

    /// Bytes read and not parsed yet (a pipelined request waiting for its turn).
    var hasUnparsedInput: Bool { pendingStart < pending.count }

    init(_ connection: any StreamConnection, server: HTTPServer, now: UInt64) {
        self.connection = connection
        self.server = server
        self.state = HTTPConnectionState(limits: server.limits, now: now)
    }

    func start() {
        connection.onWritesDrained = { self.drained() }
        read()
    }

    private func read() {
        guard !inputEnded else { return }
        connection.startReading { event in self.onRead(event) }
    }

    private func onRead(_ event: StreamReadEvent) {
        switch event {
        case .data(let bytes):
            switch state.phase {
            case .lingering:
                if !state.dropped(bytes.count) { closeNow() }
            case .closed:
                break
            case .awaitingHead, .responding:
                pending.append(contentsOf: bytes)
                answersThisTurn = 0
                process()
            }
        case .eof:
            inputEnded = true
            if case .lingering = state.phase { return finishWhenSent() }
            process()
        case .error:
            closeNow()
        }
    }

    /// Parses what was read, within the head's allowance, and answers each whole head in turn,
    /// as long as the connection is reading heads.
    private func process() {
        while case .awaitingHead = state.phase, pendingStart < pending.count {
            if answersThisTurn >= Self.answersPerTurn {
                // The rest in a later turn, after other I/O.
                connection.stopReading()
                let me = UncheckedBox(self)
                server.loop.execute { me.value.resume() }
                return
            }
            let count = min(pending.count - pendingStart, state.headAllowance)
            let outcome = pending.withUnsafeBytes { all in
                parser.parse(UnsafeRawBufferPointer(rebasing: all[pendingStart..<(pendingStart + count)]))
            }
            let now = MonotonicClock.milliseconds()
            switch outcome {
            case .needMore:
                pendingStart += count
                if !state.parsed(count, now: now) {
                    server.statistics.badRequests += 1
                    return refuse(HTTPResponse.text(431, "request head larger than \(server.limits.maxHeadBytes) bytes"))
                }
            case .invalid(let why):
                server.statistics.badRequests += 1
                return refuse(HTTPResponse.text(400, why))
            case .head(let head, let consumed):
                pendingStart += consumed
                _ = state.parsed(consumed, now: now)
                state.headComplete(now: now)
                parser.reset()
                answersThisTurn += 1
                answer(head)
            }
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 65536)
            pendingStart = 0
        }
        if inputEnded, case .awaitingHead = state.phase { finishWhenSent() }
    }

    /// Goes on with pipelined requests in a later loop turn.
    private func resume() {
        answersThisTurn = 0
        guard case .awaitingHead = state.phase else { return }
        read()
        process()
    }

    private func answer(_ head: HTTPRequestHead) {
        if let violation = head.violation {
            server.statistics.badRequests += 1
            return respond(HTTPResponse.text(400, violation), to: head, keepOpen: false)
        }
        server.statistics.requests += 1
        switch server.handler(head) {
        case .respond(let response):
            respond(response, to: head, keepOpen: HTTPConnectionState.keepsOpen(after: head, serverClosing: server.isClosed))
        case .upgrade(let take):
            let buffered = Array(pending[pendingStart...])
            connection.stopReading()
            connection.onWritesDrained = nil
            state.close()
            server.forget(self)
            take(connection, buffered)
        }
    }

    /// Answers bad input and closes (after lingering).
    private func refuse(_ response: HTTPResponse) {
        respond(response, to: nil, keepOpen: false)
    }

    private func respond(_ response: HTTPResponse, to head: HTTPRequestHead?, keepOpen: Bool) {
        let withBody = head?.method != "HEAD" && !response.body.isEmpty
        let headBytes = response.encodedHead(closing: !keepOpen, bodyLength: response.body.count)
        if withBody { connection.write([headBytes, response.body]) } else { connection.write(headBytes) }
        let drained = connection.writeQueueSize == 0
        state.responded(keepOpen: keepOpen, drained: drained, now: MonotonicClock.milliseconds())
        if !keepOpen {
            // Nothing more is parsed. A FIN (over TLS, close_notify and a FIN) follows the
            // answer, so the client sees its end at once; what it still sends is read and dropped meanwhile, so that it reads the
            // answer instead of a reset (a close with unread input resets the connection).
            pending = []
            pendingStart = 0
            connection.shutdownWrites()
            if inputEnded { finishWhenSent() }
        } else if !drained {
            connection.stopReading()
        }
    }

    private func drained() {
        switch state.phase {
        case .responding:
            state.drained(now: MonotonicClock.milliseconds())
            read()
            answersThisTurn = 0
            process()
        case .lingering where inputEnded:
            finishWhenSent()
        default:
            break
        }
    }

    /// A limit ran out.
    func expire(_ expiry: HTTPConnectionState.Expiry) {
        switch expiry {
        case .headTimeout:
            server.statistics.timeouts += 1
            refuse(HTTPResponse.text(408, "request head not received within \(server.limits.headTimeoutMilliseconds / 1000) s"))
        case .sendTimeout:
            server.statistics.timeouts += 1
            closeNow()
        case .lingerOver where connection.writeQueueSize > 0:
            // The client has not read the answer meanwhile.
            closeNow()
        case .idle, .lingerOver:
            finishWhenSent()
        }
    }

    /// Closes once what was written has left: at once when nothing waits, else when it drains
    /// (``drained()``) or a limit closes it outright.
    private func finishWhenSent() {
        guard state.phase != .closed, connection.writeQueueSize == 0 else { return }
        state.close()
        server.forget(self)
        connection.shutdownAndClose()
    }

    /// Closes at once, dropping what was not sent.
    func closeNow() {
        guard state.phase != .closed else { return }
        state.close()
        server.forget(self)
        connection.close()
    }
}
