import Testing
import PageSyncCore

private func plain(_ s: String) -> YAMLNode { .scalar(s, plain: true) }
private func map(_ entries: (String, YAMLNode)...) -> YAMLNode {
    .mapping(entries.map { YAMLEntry(key: $0.0, value: $0.1) })
}

@Suite struct YAMLConfigFlattenTests {
    @Test func nestedMappingsBecomeDottedKeysAndSequencesLists() throws {
        let doc = map(
            ("listen", plain("127.0.0.1:7777")),
            ("rooms", .sequence([plain("guide"), .scalar("slides", plain: false)])),
            ("room", map(("slides", map(("file", plain("slides.md")), ("wrap", plain("true")))))))
        #expect(try YAMLConfig.flatten(doc) == [
            "listen": .scalar("127.0.0.1:7777"),
            "rooms": .list(["guide", "slides"]),
            "room.slides.file": .scalar("slides.md"),
            "room.slides.wrap": .scalar("true"),
        ])
    }

    @Test func anEmptyDocumentHasNoValues() throws {
        #expect(try YAMLConfig.flatten(nil) == [:])
        #expect(try YAMLConfig.flatten(map()) == [:])
    }

    @Test(arguments: ["", "~", "null", "Null", "NULL"])
    func aPlainNullLeavesItsKeyUnset(text: String) throws {
        #expect(try YAMLConfig.flatten(map(("token", plain(text)), ("x", plain("1")))) == ["x": .scalar("1")])
    }

    @Test func aQuotedNullIsText() throws {
        #expect(try YAMLConfig.flatten(map(("token", .scalar("null", plain: false)))) == ["token": .scalar("null")])
        #expect(try YAMLConfig.flatten(map(("token", .scalar("", plain: false)))) == ["token": .scalar("")])
    }

    @Test func badShapesAreOneLineErrorsNamingTheKey() {
        #expect(throws: YAMLConfigError("the top level is not a mapping of keys to values")) { try YAMLConfig.flatten(plain("x")) }
        #expect(throws: YAMLConfigError("the top level is not a mapping of keys to values")) { try YAMLConfig.flatten(.sequence([])) }
        #expect(throws: YAMLConfigError("listen: the key appears twice")) {
            try YAMLConfig.flatten(map(("listen", plain("a")), ("listen", plain("b"))))
        }
        #expect(throws: YAMLConfigError("room.a.b: a key may not contain a dot; nest it instead")) {
            try YAMLConfig.flatten(map(("room", map(("a.b", plain("x"))))))
        }
        #expect(throws: YAMLConfigError("rooms: item 2 of the list is not a single value")) {
            try YAMLConfig.flatten(map(("rooms", .sequence([plain("a"), map(("b", plain("c")))]))))
        }
        #expect(throws: YAMLConfigError("room: an empty key")) {
            try YAMLConfig.flatten(map(("room", map(("", plain("x"))))))
        }
    }

    @Test func theSameKeyInTwoMappingsIsFine() throws {
        let doc = map(("room", map(("a", map(("file", plain("x")))), ("b", map(("file", plain("y")))))))
        #expect(try YAMLConfig.flatten(doc) == ["room.a.file": .scalar("x"), "room.b.file": .scalar("y")])
    }
}

@Suite struct YAMLScalarTests {
    @Test(arguments: [
        ("0", 0), ("60", 60), ("-5", -5), ("+7", 7), ("1_000_000", 1_000_000), ("0x1F", 31), ("0o17", 15),
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
    ])
    func wholeNumbers(text: String, value: Int) {
        #expect(YAMLConfig.int(text) == value)
    }

    @Test(arguments: ["", "-", "1.5", "abc", "12a", "_1", "1_", "0x", "9223372036854775808", "-9223372036854775809", " 1", "1e3"])
    func notWholeNumbers(text: String) {
        #expect(YAMLConfig.int(text) == nil)
    }

    @Test(arguments: ["true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"])
    func truths(text: String) { #expect(YAMLConfig.bool(text) == true) }

    @Test(arguments: ["false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"])
    func falsehoods(text: String) { #expect(YAMLConfig.bool(text) == false) }

    @Test(arguments: ["", "1", "0", "tRUE", "y", "n", "enabled"])
    func notBooleans(text: String) { #expect(YAMLConfig.bool(text) == nil) }

    @Test func floatingPoint() {
        #expect(YAMLConfig.double("1.5") == 1.5)
        #expect(YAMLConfig.double("-2e3") == -2000)
        #expect(YAMLConfig.double("7") == 7)
        #expect(YAMLConfig.double(".inf") == .infinity)
        #expect(YAMLConfig.double("-.inf") == -.infinity)
        #expect(YAMLConfig.double(".nan")?.isNaN == true)
        #expect(YAMLConfig.double("x") == nil)
    }
}

@Suite struct YAMLTreeBuilderTests {
    @Test func eventsBuildTheTree() throws {
        var b = YAMLTreeBuilder()
        try b.startDocument(line: 1)
        b.startMapping(anchor: nil)
        try b.scalar("rooms", plain: true, anchor: nil, line: 1)
        b.startSequence(anchor: nil)
        try b.scalar("a", plain: true, anchor: nil, line: 1)
        try b.scalar("b", plain: false, anchor: nil, line: 1)
        try b.end(line: 1)
        try b.scalar("listen", plain: true, anchor: nil, line: 2)
        try b.scalar("x:1", plain: true, anchor: nil, line: 2)
        #expect(b.root == nil, "not complete yet")
        try b.end(line: 3)
        #expect(b.root == map(("rooms", .sequence([plain("a"), .scalar("b", plain: false)])), ("listen", plain("x:1"))))
    }

    @Test func anAliasCopiesItsAnchoredNode() throws {
        var b = YAMLTreeBuilder()
        b.startMapping(anchor: nil)
        try b.scalar("a", plain: true, anchor: nil, line: 1)
        b.startMapping(anchor: "base")
        try b.scalar("wrap", plain: true, anchor: nil, line: 1)
        try b.scalar("true", plain: true, anchor: nil, line: 1)
        try b.end(line: 1)
        try b.scalar("b", plain: true, anchor: nil, line: 2)
        try b.alias("base", line: 2)
        try b.end(line: 2)
        #expect(b.root == map(("a", map(("wrap", plain("true")))), ("b", map(("wrap", plain("true"))))))
    }

    @Test func badEventsAreErrorsWithTheirLine() throws {
        var b = YAMLTreeBuilder()
        b.startMapping(anchor: nil)
        #expect(throws: YAMLConfigError("line 4: *nope names no anchor before it")) { try b.alias("nope", line: 4) }
        // A list where a key should be.
        b = YAMLTreeBuilder()
        b.startMapping(anchor: nil)
        b.startSequence(anchor: nil)
        #expect(throws: YAMLConfigError("line 6: a key must be a single value, not a list or a mapping")) { try b.end(line: 6) }
        b = YAMLTreeBuilder()
        #expect(throws: YAMLConfigError("line 7: an end with nothing open")) { try b.end(line: 7) }
        b = YAMLTreeBuilder()
        try b.startDocument(line: 1)
        #expect(throws: YAMLConfigError("line 9: the file holds more than one YAML document")) { try b.startDocument(line: 9) }
    }

    @Test func aKeyWithoutAValueAtTheEndIsAnError() throws {
        var b = YAMLTreeBuilder()
        b.startMapping(anchor: nil)
        try b.scalar("k", plain: true, anchor: nil, line: 1)
        #expect(throws: YAMLConfigError("line 2: k has no value")) { try b.end(line: 2) }
    }
}
