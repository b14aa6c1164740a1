import Configuration
import PageSyncCore
import Testing

import PageSyncServer

private func parse(_ text: String) throws(YAMLConfigError) -> YAMLNode? {
    let bytes = Array(text.utf8)
    let result: Result<YAMLNode?, YAMLConfigError> = bytes.withUnsafeBytes { raw in
        Result { () throws(YAMLConfigError) in try LibYAMLParser.parse(raw) }
    }
    return try result.get()
}

/// libyaml itself, through the parser the daemon reads its config file with.
@Suite struct LibYAMLParserTests {
    @Test func blockAndFlowStylesQuotesAndComments() throws {
        let node = try parse("""
            # a comment
            listen: "127.0.0.1:7777"   # trailing comment
            rooms: [guide, 'slides']
            room:
              slides:
                file: documents/slides.md
                lines:
                  - one
                  - "two"
            """)
        #expect(node == .mapping([
            YAMLEntry(key: "listen", value: .scalar("127.0.0.1:7777", plain: false)),
            YAMLEntry(key: "rooms", value: .sequence([.scalar("guide", plain: true), .scalar("slides", plain: false)])),
            YAMLEntry(key: "room", value: .mapping([
                YAMLEntry(key: "slides", value: .mapping([
                    YAMLEntry(key: "file", value: .scalar("documents/slides.md", plain: true)),
                    YAMLEntry(key: "lines", value: .sequence([.scalar("one", plain: true), .scalar("two", plain: false)])),
                ])),
            ])),
        ]))
    }

    @Test func anEmptyFileOrOnlyCommentsHoldNothing() throws {
        #expect(try parse("") == nil)
        #expect(try parse("# nothing here\n\n") == nil)
    }

    @Test func anchorsAndAliasesAreResolved() throws {
        let node = try parse("base: &b {wrap: true}\nother: *b\n")
        let wrap = YAMLNode.mapping([YAMLEntry(key: "wrap", value: .scalar("true", plain: true))])
        #expect(node == .mapping([YAMLEntry(key: "base", value: wrap), YAMLEntry(key: "other", value: wrap)]))
    }

    @Test func unicodeAndBlockScalarsKeepTheirText() throws {
        #expect(try parse("name: \"Zoë 名前\"\nnote: |\n  two\n  lines\n") == .mapping([
            YAMLEntry(key: "name", value: .scalar("Zoë 名前", plain: false)),
            YAMLEntry(key: "note", value: .scalar("two\nlines\n", plain: false)),
        ]))
    }

    @Test(arguments: [
        ("listen: [a\n", "line 2, column 1"),
        ("a: b: c\n", "line 1, column 5: mapping values are not allowed in this context"),
        ("\tlisten: x\n", "line 1, column 1"),
        ("a: 1\n---\nb: 2\n", "line 2: the file holds more than one YAML document"),
        ("a: *nope\n", "line 1: *nope names no anchor before it"),
        ("? [x]\n: y\n", "a key must be a single value"),
    ])
    func badYAMLIsOneLineWithItsPlace(text: String, expected: String) {
        do {
            let node = try parse(text)
            Issue.record("parsed \(text.debugDescription) as \(String(describing: node))")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }
}

/// What swift-configuration gets from the snapshot, type by type.
@Suite struct YAMLFileSnapshotTests {
    @Test func valuesAreReadAsTheTypeAskedFor() {
        #expect(YAMLFileSnapshot.content(.scalar("60"), as: .int) == .int(60))
        #expect(YAMLFileSnapshot.content(.scalar("60"), as: .string) == .string("60"))
        #expect(YAMLFileSnapshot.content(.scalar("yes"), as: .bool) == .bool(true))
        #expect(YAMLFileSnapshot.content(.scalar("1.5"), as: .double) == .double(1.5))
        #expect(YAMLFileSnapshot.content(.list(["a", "b"]), as: .stringArray) == .stringArray(["a", "b"]))
        #expect(YAMLFileSnapshot.content(.list(["1", "2"]), as: .intArray) == .intArray([1, 2]))
        #expect(YAMLFileSnapshot.content(.list(["on", "off"]), as: .boolArray) == .boolArray([true, false]))
    }

    @Test func valuesThatAreNotOfTheTypeAskedForAreNot() {
        #expect(YAMLFileSnapshot.content(.scalar("soon"), as: .int) == nil)
        #expect(YAMLFileSnapshot.content(.scalar("maybe"), as: .bool) == nil)
        #expect(YAMLFileSnapshot.content(.list(["a"]), as: .string) == nil)
        #expect(YAMLFileSnapshot.content(.scalar("a"), as: .stringArray) == nil)
        #expect(YAMLFileSnapshot.content(.list(["1", "x"]), as: .intArray) == nil)
    }

    @Test func aConfigReaderReadsTheFileThroughIt() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", "max-clients: 0x10\nrooms: [a, b]\nroom:\n  a:\n    wrap: on\n")
        let reader = ConfigReader(provider: try await FileProvider<YAMLFileSnapshot>(filePath: .init(file)))
        #expect(reader.int(forKey: "max-clients") == 16)
        #expect(reader.stringArray(forKey: "rooms") == ["a", "b"])
        #expect(reader.bool(forKey: "room.a.wrap") == true)
        #expect(reader.string(forKey: "room.b.wrap") == nil)
        #expect(reader.int(forKey: "rooms") == nil)
    }

    @Test func theDebugDescriptionNamesKeysButNoValues() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", "redis: \"redis://u:hunter2@h:1\"\n")
        let provider = try await FileProvider<YAMLFileSnapshot>(filePath: .init(file))
        let snapshot = try #require(provider.snapshot() as? YAMLFileSnapshot)
        #expect(snapshot.debugDescription.hasSuffix("[1 values: redis]"), "\(snapshot.debugDescription)")
        #expect(!snapshot.debugDescription.contains("hunter2"))
    }
}
