import Testing
import PageSyncCore

@Suite struct RestartOnlySettingsTests {
    private static let redisA = RedisURL(location: .tcp(host: "127.0.0.1", port: 6379))
    private static let redisB = RedisURL(location: .tcp(host: "127.0.0.1", port: 6380))

    private static func journal() -> ServerConfig {
        ServerConfig(listen: ListenAddress(host: "127.0.0.1", port: 7777), stateDirectory: "/var/lib/a", durability: .batch)
    }

    private static func redis() -> ServerConfig {
        var config = journal()
        config.redis = redisA
        config.redisPrefix = "a:"
        return config
    }

    @Test func nothingChangedKeepsAllAndSaysNothing() {
        let (kept, warnings) = RestartOnlySettings.keep(running: Self.journal(), fresh: Self.journal(), socketActivated: false)
        #expect(kept == Self.journal())
        #expect(warnings.isEmpty)
    }

    @Test func metricsListenNeedsARestartAndMetricsRoomsDoesNot() {
        var running = Self.journal()
        running.metricsListen = ListenAddress(host: "127.0.0.1", port: 7779)
        var fresh = running
        fresh.metricsListen = nil
        fresh.metricsRooms = 5
        let (kept, warnings) = RestartOnlySettings.keep(running: running, fresh: fresh, socketActivated: false)
        #expect(kept.metricsListen == running.metricsListen)
        #expect(kept.metricsRooms == 5)
        #expect(warnings == ["metrics-listen changes need a restart; still on 127.0.0.1:7779"])
        let (_, turningOn) = RestartOnlySettings.keep(running: Self.journal(), fresh: running, socketActivated: false)
        #expect(turningOn == ["metrics-listen changes need a restart; still off"])
    }

    @Test func webTLSListenNeedsARestart() {
        var running = Self.journal()
        running.webTLSListen = ListenAddress(host: "0.0.0.0", port: 8443)
        var fresh = running
        fresh.webTLSListen = ListenAddress(host: "0.0.0.0", port: 9443)
        let (kept, warnings) = RestartOnlySettings.keep(running: running, fresh: fresh, socketActivated: false)
        #expect(kept.webTLSListen == running.webTLSListen)
        #expect(warnings == ["web-tls-listen changes need a restart; still on 0.0.0.0:8443"])
    }

    @Test func theJournalEngineKeepsListenStateDirAndDurabilityAndNamesEach() {
        var fresh = Self.journal()
        fresh.listen = ListenAddress(host: "0.0.0.0", port: 7000)
        fresh.stateDirectory = "/var/lib/b"
        fresh.durability = .always
        fresh.maxClients = 5
        let (kept, warnings) = RestartOnlySettings.keep(running: Self.journal(), fresh: fresh, socketActivated: false)
        #expect(kept.listen == Self.journal().listen)
        #expect(kept.stateDirectory == "/var/lib/a")
        #expect(kept.durability == .batch)
        #expect(kept.maxClients == 5, "the reloadable settings come from the fresh config")
        #expect(warnings == [
            "listen address changes need a restart; still on 127.0.0.1:7777",
            "state-dir changes need a restart; still /var/lib/a",
            "durability changes need a restart; still batch",
        ])
    }

    @Test func underSocketActivationListenIsNotUsedAndSaysNothing() {
        var fresh = Self.journal()
        fresh.listen = ListenAddress(host: "0.0.0.0", port: 7000)
        let (kept, warnings) = RestartOnlySettings.keep(running: Self.journal(), fresh: fresh, socketActivated: true)
        #expect(kept.listen == Self.journal().listen)
        #expect(warnings.isEmpty)
    }

    @Test func theJournalEngineIgnoresRedisPrefixButNotTurningRedisOn() {
        var prefixOnly = Self.journal()
        prefixOnly.redisPrefix = "other:"
        let quiet = RestartOnlySettings.keep(running: Self.journal(), fresh: prefixOnly, socketActivated: false)
        #expect(quiet.config.redisPrefix == Self.journal().redisPrefix)
        #expect(quiet.warnings.isEmpty, "redis-prefix is not used by the journal engine")

        var toRedis = Self.journal()
        toRedis.redis = Self.redisA
        let loud = RestartOnlySettings.keep(running: Self.journal(), fresh: toRedis, socketActivated: false)
        #expect(loud.config.redis == nil)
        #expect(loud.warnings == ["engine changes need a restart; still journal"])
    }

    @Test func theRedisEngineKeepsItsRedisAndPrefixAndIgnoresStateDirAndDurability() {
        var fresh = Self.redis()
        fresh.redis = Self.redisB
        fresh.redisPrefix = "b:"
        fresh.stateDirectory = "/var/lib/b"
        fresh.durability = .always
        let (kept, warnings) = RestartOnlySettings.keep(running: Self.redis(), fresh: fresh, socketActivated: false)
        #expect(kept.redis == Self.redisA)
        #expect(kept.redisPrefix == "a:")
        #expect(kept.stateDirectory == "/var/lib/a")
        #expect(kept.durability == .batch)
        #expect(warnings == [
            "redis changes need a restart; still \(Self.redisA)",
            "redis-prefix changes need a restart; still a:",
        ])
    }

    @Test func turningRedisOffNamesTheEngine() {
        var fresh = Self.redis()
        fresh.redis = nil
        let (kept, warnings) = RestartOnlySettings.keep(running: Self.redis(), fresh: fresh, socketActivated: false)
        #expect(kept.redis == Self.redisA)
        #expect(warnings == ["engine changes need a restart; still redis"])
    }
}
