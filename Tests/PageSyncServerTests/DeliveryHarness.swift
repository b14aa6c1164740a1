import PageSyncCore
import PageSyncServer

/// A client whose socket is memory: what reached the peer, what waits in the connection,
/// and whether the peer reads.
final class MemoryClient: DeliveryMember {
    var outbox = Outbox()
    var fanoutCursor = FanoutLog.Cursor(run: 0, offered: 0)
    var runtime: MemoryRoom
    var flushQueued = false
    var waitQueued = false
    var resumeQueued = false
    var commandsThisTurn = 0
    var timeThisTurn: Duration = .zero
    var sharesWebBudget = false
    let id: Int
    let name: String
    /// Whether the peer reads: while it does not, every write waits in the connection.
    var reading = true
    /// Bytes that reached the peer and that it has not looked at yet (``read()``).
    private var arrived: [UInt8] = []
    /// Bytes written while the peer did not read, in order.
    private(set) var queued: [UInt8] = []
    /// Write calls, direct ones included.
    private(set) var writes = 0

    init(id: Int, name: String, in room: MemoryRoom) {
        self.id = id
        self.name = name
        self.runtime = room
    }

    var backedUp: Bool { !queued.isEmpty }
    var queuedOutputMemory: Int { queued.count }

    func write(_ bytes: UnsafeRawBufferPointer) {
        writes += 1
        take(bytes)
    }

    func write(_ chunks: [OutboxChunk]) {
        writes += 1
        for chunk in chunks { chunk.withUnsafeBytes { take($0) } }
    }

    func writeIfIdle(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard queued.isEmpty else { return false }
        write(bytes)
        return true
    }

    private func take(_ bytes: UnsafeRawBufferPointer) {
        if reading && queued.isEmpty {
            arrived += bytes
        } else {
            queued += bytes
        }
    }

    /// The lines that reached the peer since the last call, each as ``summary(_:)`` gives it.
    func read() -> [String] {
        defer { arrived.removeAll() }
        return String(decoding: arrived, as: UTF8.self).split(separator: "\n").map { summary(String($0)) }
    }

    /// The peer reads again: what waited in the connection reaches it, and the delivery is
    /// told the writes drained.
    func resumeReading(_ delivery: inout TurnDelivery<MemoryClient>) {
        reading = true
        arrived += queued
        queued.removeAll()
        delivery.writesDrained(self)
    }
}

/// A room whose `PAGE` lines are the daemon's (``Wire/event(room:_:)``).
final class MemoryRoom: DeliveryRoom {
    var room: Room
    var submitted: RoomState
    var saved: RoomState
    var changedThisTurn = false
    var fanout = FanoutLog()
    var members = MemberSet<MemoryClient>()

    init(_ name: String, pages: Int = 10) {
        let state = RoomState(page: .first, pageCount: pages, version: 0, by: nil, doc: "d")
        room = Room(name: name, policy: RoomPolicy(wraps: false, requiresToken: false), state: state)
        submitted = state
        saved = state
    }

    var name: String { room.name }
    var state: RoomState { room.state }
    func restore(_ state: RoomState) { room.restore(state) }
    func pageLine() -> ByteLine { Wire.event(room: room.name, room.state) }
}

/// A line as the tests compare it: `PAGE a v3` (room a at version 3), `OK v3` (a
/// navigation's reply), `STATUS v3`, `ERR 507`, `OK PONG`, or the line itself.
func summary(_ line: String) -> String {
    let fields = line.split(separator: " ")
    let version = fields.first { $0.hasPrefix("version=") }.map { "v" + $0.dropFirst("version=".count) }
    let room = fields.first { $0.hasPrefix("room=") }.map { $0.dropFirst("room=".count) }
    switch (fields.first, fields.dropFirst().first) {
    case ("PAGE", _): return "PAGE \(room ?? "?") \(version ?? "?")"
    case ("OK", let second?) where second.hasPrefix("page="): return "OK \(version ?? "?")"
    case ("OK", let second?) where second.hasPrefix("room="): return "STATUS \(version ?? "?")"
    case ("ERR", "507"): return "ERR 507"
    default: return line
    }
}

/// The coordinator's side of the delivery, without sockets or an engine: the commands that
/// stage output, and the phases of a loop turn. Groups are settled or failed by the test.
struct DeliveryHarness {
    var delivery = TurnDelivery<MemoryClient>(outputHighWater: 256 << 10)
    var rooms: [String: MemoryRoom] = [:]
    var clients: [MemoryClient] = []
    /// Every group formed, with its records.
    var groups: [(id: UInt64, rooms: [SavedRoom])] = []
    /// Clients the delivery said to close, once their output had left.
    var closed: [MemoryClient] = []
    /// Clients whose input the delivery paused.
    var paused: [MemoryClient] = []

    mutating func room(_ name: String, pages: Int = 10) -> MemoryRoom {
        let room = MemoryRoom(name, pages: pages)
        rooms[name] = room
        return room
    }

    /// A new connection in `room`.
    mutating func connect(_ name: String, to room: MemoryRoom) -> MemoryClient {
        let client = MemoryClient(id: clients.count + 1, name: name, in: room)
        clients.append(client)
        room.members[client.id] = client
        delivery.entered(client, room)
        return client
    }

    /// `NEXT` (or `GOTO page`) from `client`, as the coordinator handles it.
    mutating func navigate(_ client: MemoryClient, to page: Int? = nil) {
        command(client)
        let room = client.runtime
        let navigation: Navigation = page.map { .goto(PageNumber(clamping: $0, pageCount: room.state.pageCount)) } ?? .next
        switch room.room.navigate(navigation, ifVersion: nil, by: client.name, hasControl: true) {
        case .success(.moved):
            delivery.moved(room, reply: NavigatedReply(room.state), by: client)
        case .success(.unchanged):
            delivery.stage(client, .change(NavigatedReply(room.state)))
        case .failure(let error):
            delivery.stage(client, .state(Wire.error(error, room: snapshot(room, current: true)), fallback: .navigationError(error, room: room.name)))
        }
    }

    /// `PING`.
    mutating func ping(_ client: MemoryClient) {
        command(client)
        delivery.stage(client, .bytes(Wire.ok("PONG")))
    }

    /// `STATUS`: rendered from the room's state now, reporting the saved one should it fail.
    mutating func status(_ client: MemoryClient) {
        command(client)
        let reply = DeferredReply.status(room: client.runtime.name, control: true, clients: client.runtime.members.count)
        delivery.stage(client, .state(render(reply, current: true), fallback: reply))
    }

    /// `QUIT`.
    mutating func quit(_ client: MemoryClient) {
        command(client)
        delivery.stage(client, .bytes(Wire.ok("BYE")))
        delivery.close(client)
    }

    /// Counts a command against the client's budget, or pauses its input; true if it may go.
    @discardableResult
    mutating func command(_ client: MemoryClient) -> Bool {
        guard delivery.mayHandleCommand(client, used: .zero) else {
            paused.append(client)
            return false
        }
        delivery.commandStarted(client)
        return true
    }

    /// The end of a loop turn: phase 1 (paused input that may resume), phase 2 (the turn's
    /// group, recorded), phase 3 (delivery). Returns the clients whose input resumed and
    /// whether the next turn must come at once.
    @discardableResult
    mutating func endTurn() -> (resumed: [MemoryClient], again: Bool) {
        let resumed = delivery.takeResumable()
        if let group = delivery.formGroup() { groups.append(group) }
        let rooms = self.rooms
        let again = delivery.deliver { Self.render($0, rooms: rooms, current: false) }
        closed += delivery.takeClosed()
        return (resumed, again)
    }

    mutating func settle(upTo group: UInt64) { delivery.settle(upTo: group) }

    /// Groups after `after` failed; returns the rooms whose document change was undone.
    @discardableResult
    mutating func fail(after: UInt64, reason: String = "disk full") -> [MemoryRoom] {
        let line = Wire.error(ProtocolError(code: .notSaved, message: "state not saved: \(reason)", closesConnection: false))
        return delivery.fail(after: after, errorLine: line, members: clients)
    }

    func render(_ reply: DeferredReply, current: Bool) -> [UInt8] {
        Self.render(reply, rooms: rooms, current: current)
    }

    func snapshot(_ room: MemoryRoom, current: Bool) -> RoomSnapshot {
        RoomSnapshot(name: room.name, state: current ? room.state : room.saved, wraps: false)
    }

    /// What the coordinator's render does, for the replies the harness stages.
    static func render(_ reply: DeferredReply, rooms: [String: MemoryRoom], current: Bool) -> [UInt8] {
        switch reply {
        case .status(let name, let control, let clients):
            guard let room = rooms[name] else { return [] }
            let state = current ? room.state : room.saved
            return Wire.status(RoomSnapshot(name: name, state: state, wraps: false), control: control, clients: clients)
        case .navigationError(let error, let name):
            guard let room = rooms[name] else { return [] }
            let state = current ? room.state : room.saved
            return Wire.error(error, room: RoomSnapshot(name: name, state: state, wraps: false))
        case .hello, .joined, .rooms:
            return []
        }
    }
}
