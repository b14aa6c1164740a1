import Logging
import PageSyncCore
import UV

extension Coordinator {

    func watchDocuments() {
        var directories: [String: [String]] = [:]
        for runtime in rooms.values {
            guard case .file(let path) = runtime.config.document else { continue }
            let (directory, _) = Self.split(path)
            directories[directory, default: []].append(runtime.room.name)
        }
        for directory in directories.keys where fileWatchers[directory] == nil {
            do {
                fileWatchers[directory] = try FileWatcher(loop: loop, path: directory) { filename in
                    self.fileChanged(directory: directory, filename: filename)
                }
            } catch {
                logger.warning("cannot watch \(directory) for changes (\(error)); send SIGHUP after editing documents")
            }
        }
    }

    static func split(_ path: String) -> (directory: String, file: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    func fileChanged(directory: String, filename: String?) {
        for runtime in rooms.values {
            guard case .file(let path) = runtime.config.document else { continue }
            let (dir, file) = Self.split(path)
            guard dir == directory, filename == nil || filename == file else { continue }
            scheduleReindex(runtime.room.name)
        }
    }

    /// Editors write in bursts: wait 100 ms of quiet before re-indexing.
    func scheduleReindex(_ name: String) {
        let timer = reindexTimers[name] ?? {
            let timer = UV.Timer(loop: loop)
            reindexTimers[name] = timer
            return timer
        }()
        timer.stop()
        timer.start(afterMilliseconds: 100) { self.reindex(name) }
    }

    /// Re-indexes a room's document off the loop, then applies the result here.
    func reindex(_ name: String) {
        guard let runtime = rooms[name] else { return }
        let roomConfig = runtime.config
        runtime.reindexGeneration += 1
        let generation = runtime.reindexGeneration
        Task.detached { [self] in
            do throws(DocumentError) {
                let document = try Document.open(roomConfig.document, pagination: roomConfig.pagination)
                await self.documentLoaded(document, for: roomConfig, generation: generation)
            } catch {
                await self.documentFailed(room: roomConfig.name, error: error)
            }
        }
    }

    func documentLoaded(_ document: Document, for roomConfig: RoomConfig, generation: Int) {
        guard let runtime = rooms[roomConfig.name], runtime.config == roomConfig, !shuttingDown,
            generation == runtime.reindexGeneration  // a newer scan is under way: it wins
        else { return }
        guard document.id != runtime.document.id else { return }
        runtime.document = document
        if runtime.room.documentChanged(pageCount: document.pageCount, doc: document.id) {
            roomChanged(runtime)
        } else if !runtime.room.canChange {
            logger.error("room \(roomConfig.name): version limit reached; clients keep the old page count until the state is reset")
        }
        logger.info("room \(roomConfig.name): re-indexed, \(document.pageCount) page(s), on page \(runtime.room.state.page)")
    }

    func documentFailed(room: String, error: DocumentError) {
        logger.error("room \(room): cannot re-index: \(error); keeping the previous version")
    }

    /// SIGHUP: reload the configuration and re-index every document, keeping clients.
    func reload() {
        guard !shuttingDown else { return }
        logger.info("reloading (SIGHUP)")
        observer.reloading()
        let load = reloadConfig
        reloadGeneration += 1
        let generation = reloadGeneration
        Task.detached { [self] in
            do {
                let fresh = try await load()
                await self.applyReload(fresh, generation: generation)
            } catch {
                await self.reloadFailed("\(error)")
            }
        }
    }

    func reloadFailed(_ message: String) {
        logger.error("reload: \(message); keeping the running configuration")
        for name in roomOrder { reindex(name) }
        observer.ready(status: statusLine)
    }

    func applyReload(_ fresh: ServerConfig, generation: Int) {
        // A later SIGHUP read the files again: its result is the one to apply.
        guard !shuttingDown, generation == reloadGeneration else { return }
        if fresh.listen != config.listen && listenFDs.isEmpty {
            logger.warning("reload: listen address changes need a restart; still on \(config.listen)")
        }
        if fresh.stateDirectory != config.stateDirectory {
            logger.warning("reload: state-dir changes need a restart; still \(config.stateDirectory)")
        }
        var kept = fresh
        kept.listen = config.listen
        kept.stateDirectory = config.stateDirectory
        if fresh.durability != config.durability {
            logger.warning("reload: durability changes need a restart; still \(config.durability)")
        }
        kept.durability = config.durability
        for roomConfig in fresh.rooms {
            if let runtime = rooms[roomConfig.name] {
                if runtime.config.token != roomConfig.token {
                    for member in runtime.members.values { member.control = roomConfig.token == nil }
                }
                runtime.config = roomConfig
                runtime.room.policy = roomConfig.policy
            } else {
                do {
                    addRoom(roomConfig, document: try Document.open(roomConfig.document, pagination: roomConfig.pagination))
                } catch {
                    logger.error("reload: room \(roomConfig.name): \(error); not added")
                }
            }
        }
        let removed = roomOrder.filter { name in !fresh.rooms.contains { $0.name == name } }
        if !removed.isEmpty {
            logger.warning("reload: rooms no longer configured stay open until restart: \(removed.joined(separator: ", "))")
        }
        // Keep the default room first, as configured.
        roomOrder = fresh.rooms.map(\.name).filter { rooms[$0] != nil } + removed
        kept.rooms = roomOrder.compactMap { rooms[$0]?.config }
        config = kept
        for name in roomOrder { reindex(name) }
        watchDocuments()
        logger.info("reloaded: \(roomOrder.count) room(s)")
        observer.ready(status: statusLine)
    }
}
