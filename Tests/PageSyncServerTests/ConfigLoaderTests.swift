import PageSyncCore
import Testing

import PageSyncServer

@Suite struct ConfigLoaderTests {
    @Test func noConfigServesTheGuideOnTheDefaultAddress() async throws {
        let config = try await ConfigLoader.load(configFile: nil, overrides: .init(), environment: ["HOME": "/home/x"])
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 7777))
        #expect(config.rooms == [.builtinGuide])
        #expect(config.stateDirectory == "/home/x/.local/state/pagesync")
        #expect(config.maxLineLength == 4096)
    }

    @Test func metricsAreOffByDefaultAndSetByKeyOrFlag() async throws {
        let plain = try await ConfigLoader.load(configFile: nil, overrides: .init(), environment: [:])
        #expect(plain.metricsListen == nil)
        #expect(plain.metricsRooms == 100)
        let dir = TempDir()
        let file = dir.write("m.yaml", """
            metrics-listen: ":7779"
            metrics-rooms: 3
            """)
        let fromFile = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        #expect(fromFile.metricsListen == ListenAddress(host: "127.0.0.1", port: 7779), ":PORT is loopback")
        #expect(fromFile.metricsRooms == 3)
        var overrides = CommandLineOverrides()
        overrides.metricsListen = ListenAddress(host: "::1", port: 9000)
        overrides.metricsRooms = 0
        let fromFlags = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: [:])
        #expect(fromFlags.metricsListen == ListenAddress(host: "::1", port: 9000))
        #expect(fromFlags.metricsRooms == 0)
    }

    @Test func badMetricsSettingsAreOneLineEach() async throws {
        let dir = TempDir()
        for (yaml, message) in [
            ("metrics-listen: \"7779\"", "metrics-listen: \"7779\" is not HOST:PORT (for example 127.0.0.1:7779)"),
            ("metrics-rooms: -1", "metrics-rooms must be between 0 and 100000, not -1"),
            ("metrics-rooms: many", "metrics-rooms: \"many\" is not a whole number"),
            ("listen: \"127.0.0.1:7000\"\nmetrics-listen: \"127.0.0.1:7000\"", "metrics-listen 127.0.0.1:7000 is also the listen address"),
        ] {
            let file = dir.write("bad.yaml", yaml)
            await #expect {
                try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
            } throws: { error in
                "\(error)".hasSuffix(message)
            }
        }
    }

    @Test func webTLSListenIsSetByKeyOrFlagAndNeedsTheTLSCertificate() async throws {
        let dir = TempDir()
        let file = dir.write("w.yaml", """
            web-listen: ":8080"
            web-tls-listen: "0.0.0.0:8443"
            tls:
              cert: /etc/pagesync/cert.pem
              key: /etc/pagesync/key.pem
            """)
        let fromFile = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        #expect(fromFile.webTLSListen == ListenAddress(host: "0.0.0.0", port: 8443))
        #expect(fromFile.webListen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(fromFile.tls?.listen == nil, "the web listener may be the certificate's only use")
        var overrides = CommandLineOverrides()
        overrides.webTLSListen = ListenAddress(host: "127.0.0.1", port: 9443)
        let fromFlag = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: [:])
        #expect(fromFlag.webTLSListen == ListenAddress(host: "127.0.0.1", port: 9443))
        let tls = "\ntls:\n  cert: /c.pem\n  key: /k.pem"
        for (yaml, message) in [
            ("web-tls-listen: \"8443\"", "web-tls-listen: \"8443\" is not HOST:PORT (for example 0.0.0.0:8443)"),
            ("web-tls-listen: \":8443\"", "--web-tls-listen needs a TLS certificate: give --tls-cert and --tls-key (or tls: in the config)"),
            ("web-listen: \":8443\"\nweb-tls-listen: \":8443\"" + tls, "web-tls-listen 127.0.0.1:8443 is also the web-listen address"),
            ("web-tls-listen: \":7777\"" + tls, "web-tls-listen 127.0.0.1:7777 is also the listen address"),
        ] {
            let bad = dir.write("bad.yaml", yaml)
            await #expect {
                try await ConfigLoader.load(configFile: bad, overrides: .init(), environment: [:])
            } throws: { error in
                "\(error)".hasSuffix(message)
            }
        }
    }

    @Test func systemdStateDirectoryWins() {
        #expect(ConfigLoader.defaultStateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/pagesync:/x", "HOME": "/h"]) == "/var/lib/pagesync")
        #expect(ConfigLoader.defaultStateDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/pagesync")
    }

    @Test func withoutAHomeTheStateDirectoryIsVarLib() {
        #expect(ConfigLoader.defaultStateDirectory(environment: [:]) == "/var/lib/pagesync")
        #expect(ConfigLoader.defaultStateDirectory(environment: ["HOME": "relative"]) == "/var/lib/pagesync")
        #expect(ConfigLoader.defaultStateDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/pagesync")
    }

    @Test func filesBecomeRoomsNamedAfterThem() async throws {
        var overrides = CommandLineOverrides()
        overrides.files = ["/d/notes.txt", "/d/slides.md", "/e/notes.md"]
        overrides.pagination = .lines(10)
        overrides.wraps = true
        overrides.token = "t"
        let config = try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: [:])
        #expect(config.rooms.map(\.name) == ["notes", "slides", "notes-2"])
        #expect(config.rooms[0] == RoomConfig(name: "notes", document: .file("/d/notes.txt"), pagination: .lines(10), wraps: true, token: "t"))
    }

    @Test func withoutSplitEachFileIsPagedByItsExtension() async throws {
        var overrides = CommandLineOverrides()
        overrides.files = ["/d/notes.txt", "/d/slides.md", "/d/README.MARKDOWN", "/d/plain"]
        let config = try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: [:])
        #expect(config.rooms.map(\.pagination) == [.formFeed, .markdown, .markdown, .formFeed])
    }

    @Test func roomsWithoutSplitInTheFileArePagedByExtension() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", """
            rooms: [deck, notes, book]
            room:
              deck:
                file: deck.md
              notes:
                file: notes.txt
              book:
                file: book.md
                split: "lines:40"
            """)
        let config = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        #expect(config.rooms.map(\.pagination) == [.markdown, .formFeed, .lines(40)])
    }

    @Test("notes: a room's notes file, relative to the config file; none by default")
    func roomNotesFile() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", """
            rooms: [deck, plain]
            room:
              deck:
                file: deck.md
                notes: talk/deck.notes
              plain:
                file: /srv/plain.txt
            """)
        let config = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        let directory = String(file.prefix(upTo: file.lastIndex(of: "/")!))
        #expect(config.rooms.map(\.notes) == [directory + "/talk/deck.notes", nil])
    }

    @Test func theYAMLFileIsReadKeyByKeyAndFlagsOverrideIt() async throws {
        let dir = TempDir()
        dir.write("tok", "s3cret\n")
        let file = dir.write("c.yaml", """
            listen: "[::1]:9000"
            max-clients: 5
            max-line: 128
            durability: always
            rooms: [talk, guide]
            room:
              talk:
                file: docs/talk.md
                split: "separator:---"
                wrap: true
                token-file: tok
              guide:
                file: builtin:guide
            """)
        var overrides = CommandLineOverrides()
        overrides.maxClients = 7
        let config = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: [:])
        #expect(config.listen == ListenAddress(host: "::1", port: 9000))
        #expect(config.maxClients == 7)
        #expect(config.maxLineLength == 128)
        #expect(config.durability == .always)
        #expect(config.rooms == [
            RoomConfig(name: "talk", document: .file(dir.path + "/docs/talk.md"), pagination: .separator("---"), wraps: true, token: "s3cret"),
            .builtinGuide,
        ])
    }

    @Test func connectionLimitsFromTheFileAndTheCommandLine() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", "idle-timeout: 30\nmax-clients-per-address: 50\nwho-page-size: 20\n")
        let defaults = try await ConfigLoader.load(configFile: nil, overrides: .init(), environment: [:])
        #expect(defaults.idleTimeoutSeconds == 0 && defaults.maxClientsPerAddress == 1000 && defaults.whoPageSize == 100)
        let fromFile = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        #expect(fromFile.idleTimeoutSeconds == 30 && fromFile.maxClientsPerAddress == 50 && fromFile.whoPageSize == 20)
        var overrides = CommandLineOverrides()
        overrides.idleTimeoutSeconds = 5
        overrides.maxClientsPerAddress = 2
        overrides.whoPageSize = 7
        let flags = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: [:])
        #expect(flags.idleTimeoutSeconds == 5 && flags.maxClientsPerAddress == 2 && flags.whoPageSize == 7)
        for (yaml, key) in [("idle-timeout: -1\n", "idle-timeout"), ("max-clients-per-address: 0\n", "max-clients-per-address"),
                            ("who-page-size: 0\n", "who-page-size"), ("idle-timeout: soon\n", "idle-timeout")] {
            let bad = dir.write("bad.yaml", yaml)
            do {
                _ = try await ConfigLoader.load(configFile: bad, overrides: .init(), environment: [:])
                Issue.record("accepted \(yaml)")
            } catch let error as ConfigError {
                #expect(error.message.contains(key), "\(error)")
            }
        }
    }

    @Test func tokenFileFlagReadsAPathOrACredentialForTheFileRooms() async throws {
        let dir = TempDir()
        dir.write("plain.token", "from-a-path\nignored\n")
        dir.write("notes-token", "from-systemd\n")
        var overrides = CommandLineOverrides()
        overrides.files = ["/tmp/notes.txt"]
        overrides.tokenFile = dir.path + "/plain.token"
        #expect(try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: [:]).rooms.first?.token == "from-a-path")
        overrides.tokenFile = "credential:notes-token"
        let config = try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: ["CREDENTIALS_DIRECTORY": dir.path])
        #expect(config.rooms.first?.token == "from-systemd")
        do {
            _ = try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: [:])
            Issue.record("loaded without $CREDENTIALS_DIRECTORY")
        } catch let error as ConfigError {
            #expect(error.message == "--token-file credential:notes-token: $CREDENTIALS_DIRECTORY is not set; add LoadCredential=notes-token:<file> to the systemd unit")
        }
        overrides.tokenFile = dir.path + "/missing"
        do {
            _ = try await ConfigLoader.load(configFile: nil, overrides: overrides, environment: [:])
            Issue.record("loaded a missing token file")
        } catch let error as ConfigError {
            #expect(error.message == "--token-file \(dir.path)/missing: No such file or directory")
        }
    }

    @Test func tokenFileCanNameASystemdCredential() async throws {
        let dir = TempDir()
        dir.write("deck-token", "from-systemd\n")
        let file = dir.write("c.yaml", "rooms: [deck]\nroom:\n  deck:\n    file: builtin:guide\n    token-file: credential:deck-token\n")
        let config = try await ConfigLoader.load(
            configFile: file, overrides: .init(), environment: ["CREDENTIALS_DIRECTORY": dir.path])
        #expect(config.rooms.first?.token == "from-systemd")
        do {
            _ = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
            Issue.record("loaded without $CREDENTIALS_DIRECTORY")
        } catch let error as ConfigError {
            #expect(error.message.contains("room.deck.token-file"), "\(error)")
            #expect(error.message.contains("$CREDENTIALS_DIRECTORY is not set; add LoadCredential=deck-token:<file>"), "\(error)")
        }
        let bad = dir.write("b.yaml", "rooms: [deck]\nroom:\n  deck:\n    file: builtin:guide\n    token-file: credential:../x\n")
        await #expect(throws: ConfigError.self) {
            _ = try await ConfigLoader.load(configFile: bad, overrides: .init(), environment: ["CREDENTIALS_DIRECTORY": dir.path])
        }
    }

    @Test func tlsKeyCanNameASystemdCredentialAndHandshakeTimeoutIsRead() async throws {
        let dir = TempDir()
        let file = dir.write("t.yaml", """
            tls:
              listen: "127.0.0.1:7778"
              cert: tls/cert.pem
              key: credential:pagesync_tls.key
              handshake-timeout: 3

            """)
        let config = try await ConfigLoader.load(
            configFile: file, overrides: .init(), environment: ["CREDENTIALS_DIRECTORY": "/run/credentials/pagesyncd.service"])
        let tls = try #require(config.tls)
        #expect(tls.keyFile == "/run/credentials/pagesyncd.service/pagesync_tls.key")
        #expect(tls.certificateFile == dir.path + "/tls/cert.pem")
        #expect(tls.handshakeTimeoutSeconds == 3)
        do {
            _ = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
            Issue.record("loaded a credential without $CREDENTIALS_DIRECTORY")
        } catch let error as ConfigError {
            #expect(error.message.contains("tls.key: credential:pagesync_tls.key: $CREDENTIALS_DIRECTORY is not set"), "\(error)")
        }
        var overrides = CommandLineOverrides()
        overrides.tlsHandshakeTimeoutSeconds = 0
        await #expect(throws: ConfigError.self) {
            _ = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: ["CREDENTIALS_DIRECTORY": "/x"])
        }
        let defaulted = try await ConfigLoader.load(
            configFile: dir.write("d.yaml", "tls:\n  listen: \"127.0.0.1:7778\"\n  cert: c.pem\n  key: k.pem\n"), overrides: .init(), environment: [:])
        #expect(defaulted.tls?.handshakeTimeoutSeconds == 10)
    }

    @Test(arguments: [
        ("max-clients: lots\nrooms: [a]\nroom:\n  a:\n    file: x\n", "max-clients"),
        ("listen: nowhere\n", "listen"),
        ("rooms: [a]\n", "room.a.file"),
        ("rooms: [a]\nroom:\n  a:\n    file: x\n    split: pages\n", "room.a.split"),
        ("rooms: [\"bad name\"]\n", "rooms"),
        ("rooms: guide\n", "rooms"),
        ("fsync: maybe\n", "fsync"),
        ("durability: sometimes\n", "durability"),
        ("max-line: 10\n", "max-line"),
        ("engine: redis\n", "redis"),
        ("engine: etcd\n", "engine"),
        ("redis: \"http://h:1\"\n", "redis"),
        ("redis: \"redis://h:1\"\nredis-prefix: \"has space\"\n", "redis-prefix"),
    ])
    func badValuesNameTheirKey(yaml: String, key: String) async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", yaml)
        do {
            _ = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
            Issue.record("expected an error for \(key)")
        } catch {
            #expect("\(error)".contains(key), "\(error)")
        }
    }

    @Test func theRedisEngineIsConfiguredByKeysAndFlags() async throws {
        let dir = TempDir()
        let file = dir.write("c.yaml", "engine: redis\nredis: \"redis://ann:pw@10.0.0.5:6380/2\"\nredis-prefix: \"lecture:\"\n")
        let config = try await ConfigLoader.load(configFile: file, overrides: .init(), environment: [:])
        #expect(config.redis == RedisURL(location: .tcp(host: "10.0.0.5", port: 6380), user: "ann", password: "pw", database: 2))
        #expect(config.redisPrefix == "lecture:")
        var overrides = CommandLineOverrides()
        overrides.redis = RedisURL(location: .unix(path: "/run/redis.sock"))
        overrides.redisPrefix = "x:"
        let flagged = try await ConfigLoader.load(configFile: file, overrides: overrides, environment: [:])
        #expect(flagged.redis == RedisURL(location: .unix(path: "/run/redis.sock")) && flagged.redisPrefix == "x:")
        let journal = try await ConfigLoader.load(configFile: dir.write("j.yaml", "engine: journal\nredis: \"redis://h:1\"\n"), overrides: .init(), environment: [:])
        #expect(journal.redis == nil && journal.redisPrefix == ServerConfig.defaultRedisPrefix)
    }

    @Test func aMissingConfigFileIsAnError() async {
        await #expect(throws: (any Error).self) {
            try await ConfigLoader.load(configFile: "/nonexistent/pagesyncd.yaml", overrides: .init(), environment: [:])
        }
    }

    @Test func theSampleConfigLoads() async throws {
        let root = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let config = try await ConfigLoader.load(configFile: "/" + root + "/Config/pagesyncd.yaml", overrides: .init(), environment: [:])
        #expect(config.rooms.map(\.name) == ["guide", "slides"])
        #expect(config.rooms[1].token == "change-me")
        #expect(config.rooms[1].pagination == .separator("---"))
    }
}
