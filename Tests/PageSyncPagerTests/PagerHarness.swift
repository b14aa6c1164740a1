import PageSyncCore
import Testing
import PageSyncPager

func hello(room: String = "guide", page: Int = 1, pages: Int = 6, version: UInt64 = 0, by: String = "-",
           doc: String = "d1", wrap: Bool = false, control: Bool = true, name: String = "guest-1") -> String {
    "HELLO pagesync/1 room=\(room) page=\(page) pages=\(pages) version=\(version) by=\(by) doc=\(doc) wrap=\(wrap ? "yes" : "no") control=\(control ? "yes" : "no") name=\(name)"
}

func pageEvent(room: String = "guide", page: Int, pages: Int = 6, version: UInt64, by: String = "ann", doc: String = "d1") -> String {
    "PAGE room=\(room) page=\(page) pages=\(pages) version=\(version) by=\(by) doc=\(doc)"
}

func statusReply(room: String = "guide", page: Int, pages: Int = 6, version: UInt64, doc: String = "d1", clients: Int,
                 control: Bool = true) -> String {
    "OK room=\(room) page=\(page) pages=\(pages) version=\(version) by=- doc=\(doc) epoch=e wrap=no control=\(control ? "yes" : "no") clients=\(clients)"
}

func textReply(page: Int, pages: Int = 6, doc: String = "d1", _ lines: [String], kind: String = "TEXT") -> [String] {
    ["OK \(kind) page=\(page) pages=\(pages) doc=\(doc) bytes=10 lines=\(lines.count) truncated=no"]
        + lines.map { $0.hasPrefix(".") ? "." + $0 : $0 } + ["."]
}

/// Drives a model and records what it asks for.
struct Harness {
    var model: PagerModel
    var effects: [PagerEffect] = []

    init(_ options: PagerOptions = PagerOptions()) { model = PagerModel(options: options) }

    /// Connects and greets, answering the first TEXT request with `text` (page text for the greeting's page).
    init(hello line: String = hello(), text: [String]? = ["line one", "line two"], options: PagerOptions = PagerOptions()) {
        self.init(options)
        event(.connected)
        let fx = server(line)
        if let text, fx.contains(where: { if case .send(.text) = $0 { true } else { false } }),
           let page = model.displayedPage {
            server(textReply(page: page, doc: model.room?.doc ?? "d1", text))
        }
        effects = []
    }

    /// Commands sent and not answered yet, oldest first.
    var unanswered: [String] = []
    private var inMultiline = false

    @discardableResult mutating func event(_ e: PagerEvent) -> [PagerEffect] {
        // Presence (VIEW, HAND) is answered as the server would, in its turn, before the reply
        // a test feeds: tests speak about pages, lines and text.
        if case .serverLine(let l) = e, !inMultiline, l.hasPrefix("OK") || l.hasPrefix("ERR") {
            answerPresence()
        }
        switch e {
        case .serverLine(let l):
            if inMultiline { if l == "." { inMultiline = false } }
            else if l.hasPrefix("OK") || l.hasPrefix("ERR") {
                if !unanswered.isEmpty { unanswered.removeFirst() }
                inMultiline = l.hasPrefix("OK TEXT") || l.hasPrefix("OK HELP")
            }
        case .disconnected, .connected: unanswered = []
        default: break
        }
        let fx = model.handle(e)
        effects += fx
        for case .send(let c) in fx { unanswered.append(CommandEncoder.line(c)) }
        return fx
    }

    /// Feeds lines exactly as given.
    @discardableResult mutating func server(_ lines: String...) -> [PagerEffect] { server(lines) }

    @discardableResult mutating func server(_ lines: [String]) -> [PagerEffect] {
        lines.flatMap { event(.serverLine($0)) }
    }

    /// Answers the TEXT requests at the front of the queue with "text of page n", then feeds `line`.
    @discardableResult mutating func reply(_ line: String) -> [PagerEffect] {
        answerTexts()
        return server(line)
    }

    /// Answers the TEXT requests at the front of the queue with "text of page n".
    mutating func answerTexts(with lines: [String]? = nil) {
        answerPresence()
        while let first = unanswered.first, first.hasPrefix("TEXT "), let page = Int(first.dropFirst(5)) {
            server(textReply(page: page, pages: model.room?.pageCount ?? 6, doc: model.room?.doc ?? "d1", lines ?? ["text of page \(page)"]))
            answerPresence()
        }
    }

    @discardableResult mutating func keys(_ keys: Key...) -> [PagerEffect] { keys.flatMap { event(.key($0)) } }

    @discardableResult mutating func type(_ s: String) -> [PagerEffect] { s.flatMap { event(.key(.char($0))) } }

    /// The command lines sent since the last call (presence aside: ``presenceSent``), and forget them.
    mutating func sent() -> [String] {
        defer { effects = [] }
        let lines = effects.compactMap { if case .send(let c) = $0 { CommandEncoder.line(c) } else { nil } }
        presenceSent += lines.filter(Self.isPresence)
        return lines.filter { !Self.isPresence($0) }
    }

    /// The VIEW and HAND lines sent, in order (collected by ``sent()``).
    var presenceSent: [String] = []

    static func isPresence(_ line: String) -> Bool { line.hasPrefix("VIEW ") || line.hasPrefix("HAND ") }

    /// Answers the VIEW and HAND commands at the front of the queue with their OK.
    mutating func answerPresence() {
        while let first = unanswered.first, Self.isPresence(first) {
            let reply = first.hasPrefix("VIEW FOLLOW") ? "OK VIEW follow"
                : first.hasPrefix("VIEW BROWSE ") ? "OK VIEW browse:" + first.dropFirst(12)
                : first == "HAND UP" ? "OK HAND up" : "OK HAND down"
            unanswered.removeFirst()
            let fx = model.handle(.serverLine(reply))
            effects += fx
            for case .send(let c) in fx { unanswered.append(CommandEncoder.line(c)) }
        }
    }
}
