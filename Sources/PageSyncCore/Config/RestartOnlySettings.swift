/// The settings a reload (SIGHUP) cannot change: the listening sockets and where room state
/// lives are set up once, at start. A reload keeps their running values, and says so for each
/// one that was changed and matters to the running engine.
///
/// With the journal engine, `redis-prefix` is not used, so changing it says nothing; with the
/// Redis engine, `state-dir` and `durability` are not used (room state lives in Redis), so
/// changing them says nothing either.
public enum RestartOnlySettings {
    /// `fresh` with the restart-only settings of `running` put back, and one warning line per
    /// setting that was changed and would have mattered. `socketActivated`: the listening
    /// sockets came from systemd, so `listen` is not used and says nothing.
    public static func keep(
        running: ServerConfig, fresh: ServerConfig, socketActivated: Bool
    ) -> (config: ServerConfig, warnings: [String]) {
        var warnings: [String] = []
        if fresh.listen != running.listen && !socketActivated {
            warnings.append("listen address changes need a restart; still on \(running.listen)")
        }
        if fresh.metricsListen != running.metricsListen {
            warnings.append("metrics-listen changes need a restart; still \(running.metricsListen.map { "on \($0)" } ?? "off")")
        }
        if fresh.webListen != running.webListen {
            warnings.append("web-listen changes need a restart; still \(running.webListen.map { "on \($0)" } ?? "off")")
        }
        if fresh.webTLSListen != running.webTLSListen {
            warnings.append("web-tls-listen changes need a restart; still \(running.webTLSListen.map { "on \($0)" } ?? "off")")
        }
        if let redis = running.redis {
            if fresh.redis == nil {
                warnings.append("engine changes need a restart; still redis")
            } else if fresh.redis != redis {
                warnings.append("redis changes need a restart; still \(redis)")
            }
            if fresh.redisPrefix != running.redisPrefix {
                warnings.append("redis-prefix changes need a restart; still \(running.redisPrefix)")
            }
        } else {
            if fresh.redis != nil {
                warnings.append("engine changes need a restart; still journal")
            }
            if fresh.stateDirectory != running.stateDirectory {
                warnings.append("state-dir changes need a restart; still \(running.stateDirectory)")
            }
            if fresh.durability != running.durability {
                warnings.append("durability changes need a restart; still \(running.durability)")
            }
        }
        var kept = fresh
        kept.listen = running.listen
        kept.metricsListen = running.metricsListen
        kept.webListen = running.webListen
        kept.webTLSListen = running.webTLSListen
        kept.stateDirectory = running.stateDirectory
        kept.durability = running.durability
        kept.redis = running.redis
        kept.redisPrefix = running.redisPrefix
        return (kept, warnings)
    }
}
