import Testing

import PageSyncCore

@Suite struct ServerConfigTests {
    @Test func defaultsServeTheGuideOnLoopback() throws {
        let config = ServerConfig(stateDirectory: "/tmp/x")
        #expect(config.listen.description == "127.0.0.1:7777")
        #expect(config.rooms == [.builtinGuide])
        #expect(config.maxLineLength == 4096)
        try config.validate()
    }

    @Test func roomNamesComeFromFileNamesAndNeverCollide() {
        #expect(ServerConfig.roomNames(forFiles: ["notes.txt", "/a/slides.md", "b/notes.md", "notes"]) == ["notes", "slides", "notes-2", "notes-3"])
    }

    @Test(arguments: [
        (ServerConfig(stateDirectory: "/s", rooms: []), "no rooms"),
        (ServerConfig(stateDirectory: "/s", rooms: [.builtinGuide, .builtinGuide]), "twice"),
        (ServerConfig(stateDirectory: "/s", rooms: [RoomConfig(name: "a b", document: .builtinGuide)]), "not valid"),
        (ServerConfig(stateDirectory: "/s", rooms: [RoomConfig(name: "a", document: .builtinGuide, token: "")]), "token"),
        (ServerConfig(stateDirectory: "/s", maxClients: 0), "max-clients"),
        (ServerConfig(stateDirectory: "/s", maxLineLength: 10), "max-line"),
        (ServerConfig(stateDirectory: "/s", maxTextBytes: 0), "max-text"),
        (ServerConfig(stateDirectory: "/s", keepAliveSeconds: 0), "keepalive"),
        (ServerConfig(stateDirectory: ""), "state-dir"),
    ])
    func validationNamesTheProblem(config: ServerConfig, fragment: String) {
        #expect(throws: ConfigError.self) { try config.validate() }
        do { try config.validate() } catch { #expect(error.message.contains(fragment), "\(error.message)") }
    }

    @Test func aTokenMakesAPresenterRoom() {
        #expect(RoomConfig(name: "a", document: .builtinGuide, token: "t").policy == RoomPolicy(wraps: false, requiresToken: true))
        #expect(RoomConfig(name: "a", document: .builtinGuide, wraps: true).policy == RoomPolicy(wraps: true, requiresToken: false))
    }
}

@Suite struct PageNumberArithmeticTests {
    @Test func advancingStopsOrWrapsAtTheEnds() {
        let p3 = PageNumber(3)!
        #expect(p3.advanced(by: 1, pageCount: 5, wrapping: false) == PageNumber(4))
        #expect(p3.advanced(by: 3, pageCount: 5, wrapping: false) == nil)
        #expect(p3.advanced(by: -3, pageCount: 5, wrapping: false) == nil)
        #expect(p3.advanced(by: 3, pageCount: 5, wrapping: true) == PageNumber(1))
        #expect(p3.advanced(by: -3, pageCount: 5, wrapping: true) == PageNumber(5))
        #expect(p3.advanced(by: -13, pageCount: 5, wrapping: true) == PageNumber(5))
        #expect(PageNumber.first.advanced(by: 1, pageCount: 1, wrapping: true) == .first)
    }

    @Test func clampingKeepsPagesInsideTheDocument() {
        #expect(PageNumber(clamping: 0, pageCount: 4) == .first)
        #expect(PageNumber(clamping: -7, pageCount: 4) == .first)
        #expect(PageNumber(clamping: 9, pageCount: 4) == PageNumber(4))
        #expect(PageNumber(clamping: 2, pageCount: 0) == .first)
        #expect(PageNumber.last(of: 6) == PageNumber(6))
    }
}
