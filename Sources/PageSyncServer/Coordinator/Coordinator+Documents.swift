import Logging
import PageSyncCore
import UV

extension Coordinator {

    /// Watches the directory of every room's document. A directory that cannot be watched now
    /// (most often the kernel's limit on inotify instances, `fs.inotify.max_user_instances`,
    /// reached by other processes) is tried again every second; once watched, its rooms are
    /// re-indexed, since an edit may have come in meanwhile. Called at start and after each
    /// reload: the rooms' documents are indexed here (``DocumentWatchIndex``).
    func watchDocuments() {
        // A room's notes file (`notes:`, or the one beside its document) re-reads it too.
        watching.index = DocumentWatchIndex(rooms.values.flatMap { runtime -> [(room: String, path: String)] in
            guard case .file(let path) = runtime.config.document else { return [] }
            return [(runtime.room.name, path), (runtime.room.name, runtime.config.notes ?? Document.notesPath(for: path))]
        })
        for directory in watching.index.directories where watching.watchers[directory] == nil && watching.unwatched[directory] == nil {
            do throws(UVError) {
                try startWatching(directory)
            } catch {
                logger.warning("cannot watch \(directory) for changes (\(error)); trying again every second, and SIGHUP re-indexes meanwhile")
                watching.unwatched[directory] = "\(error)"
            }
        }
        if !watching.unwatched.isEmpty && watching.retryTimer == nil && !shuttingDown {
            let timer = UV.Timer(loop: loop)
            timer.start(afterMilliseconds: Self.watchRetryMilliseconds, repeatMilliseconds: Self.watchRetryMilliseconds) {
                self.retryWatches()
            }
            watching.retryTimer = timer
        }
    }

    /// How often a directory that could not be watched is tried again.
    static let watchRetryMilliseconds: UInt64 = 1000

    private func startWatching(_ directory: String) throws(UVError) {
        watching.watchers[directory] = try FileWatcher(loop: loop, path: directory) { filename in
            self.fileChanged(directory: directory, filename: filename)
        }
    }

    /// Tries each unwatched directory again; one no room uses any more (after a reload) is
    /// dropped, and a new reason for failing is logged once.
    private func retryWatches() {
        let wanted = watching.index.directories
        for (directory, lastError) in watching.unwatched {
            guard wanted.contains(directory) else {
                watching.unwatched[directory] = nil
                continue
            }
            do throws(UVError) {
                try startWatching(directory)
            } catch {
                if "\(error)" != lastError {
                    logger.warning("cannot watch \(directory) for changes (\(error)); still trying every second")
                    watching.unwatched[directory] = "\(error)"
                }
                continue
            }
            watching.unwatched[directory] = nil
            logger.notice("watching \(directory) for changes now")
            fileChanged(directory: directory, filename: nil)
        }
        if watching.unwatched.isEmpty {
            watching.retryTimer?.close()
            watching.retryTimer = nil
        }
    }

    /// A watcher's event: the rooms serving that file (every room with a document in
    /// `directory` when `filename` is nil) are re-indexed once the writes go quiet.
    func fileChanged(directory: String, filename: String?) {
        for name in watching.index.rooms(changedIn: directory, file: filename) { scheduleReindex(name) }
    }

    /// Editors write in bursts: wait 100 ms of quiet (`milliseconds`) before re-indexing.
    func scheduleReindex(_ name: String, afterMilliseconds milliseconds: UInt64 = 100) {
        let timer = watching.reindexTimers[name] ?? {
            let timer = UV.Timer(loop: loop)
            watching.reindexTimers[name] = timer
            return timer
        }()
        timer.stop()
        timer.start(afterMilliseconds: milliseconds) { self.reindex(name) }
    }

    /// How long after an undone re-index (``TurnDelivery/fail(after:errorLine:members:)``) it is tried again: a second, so a
    /// full disk costs one failed write a second, not one per loop turn.
    static let undoneReindexRetryMilliseconds: UInt64 = 1_000

    /// After changes were undone: a room whose undone changes included a re-index (its restored
    /// state names an earlier document than the one it serves) is re-indexed again a second
    /// later, so its `doc=` comes to match the text `TEXT` serves once a change can be saved.
    func retryUndoneReindexes(_ undone: [RoomRuntime]) {
        var names: Set<String> = []
        for runtime in undone where runtime.room.state.doc != runtime.document.id {
            guard names.insert(runtime.room.name).inserted else { continue }
            runtime.reindexUndone = true
            scheduleReindex(runtime.room.name, afterMilliseconds: Self.undoneReindexRetryMilliseconds)
        }
    }

    /// Re-indexes a room's document off the loop, then applies the result here.
    func reindex(_ name: String) {
        guard let runtime = rooms[name] else { return }
        let roomConfig = runtime.config
        runtime.reindexGeneration += 1
        let generation = runtime.reindexGeneration
        let guideAddress = self.guideAddress
        Task.detached { [self] in
            do throws(DocumentError) {
                let document = try Document.open(roomConfig.document, pagination: roomConfig.pagination, notes: roomConfig.notes,
                                                 guideAddress: guideAddress)
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
        // Nothing new, unless an undone change left the state naming an earlier document. (With
        // Redis the shared state may name another daemon's file: that is left alone.)
        let isNew = document.id != runtime.document.id
        guard isNew || (runtime.reindexUndone && document.id != runtime.room.state.doc) else {
            // The same text for the audience; only the notes may have changed, which moves nobody.
            if document.notes != runtime.document.notes {
                logNewAdvice(document, replacing: runtime.document, room: roomConfig)
                runtime.document = document
                logger.info("room \(roomConfig.name): notes re-read")
            }
            return
        }
        runtime.reindexUndone = false
        logNewAdvice(document, replacing: runtime.document, room: roomConfig)
        runtime.document = document
        let before = runtime.room.state
        let page = PageNumber(clamping: before.page.number, pageCount: document.pageCount)
        let lineCount = try? document.lineCount(of: page)
        if runtime.room.documentChanged(pageCount: document.pageCount, doc: document.id, lineCount: lineCount) {
            let after = runtime.room.state
            if after.page == before.page && (after.line != before.line || after.mark != before.mark) {
                logger.info("room \(roomConfig.name): page \(page) now has \(lineCount ?? 0) line(s); line \(before.line) -> \(after.line), mark \(before.mark?.text ?? "-") -> \(after.mark?.text ?? "-")")
            }
            roomChanged(runtime)
        } else if !runtime.room.canChange {
            logger.error("room \(roomConfig.name): version limit reached; clients keep the old page count until the state is reset")
        }
        if isNew {
            logger.info("room \(roomConfig.name): re-indexed, \(document.pageCount) page(s), on page \(runtime.room.state.page)")
        } else {
            logger.debug("room \(roomConfig.name): its re-index was undone; applied again")
        }
    }

    /// The advice of a re-read document (a notes file that no longer matches, an unterminated
    /// notes comment), logged when it differs from what was logged for the document before.
    private func logNewAdvice(_ document: Document, replacing old: Document, room: RoomConfig) {
        if let advice = document.advice, advice != old.advice { logger.notice("room \(room.name): \(room.document): \(advice)") }
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
                // The certificate and key are read here, off the loop.
                let tls: Result<TLSContext, TLSError>? = fresh.tls.map { tls in
                    Result { () throws(TLSError) in try Coordinator.makeTLSContext(tls) }
                }
                await self.applyReload(fresh, tls: tls, generation: generation)
            } catch {
                await self.reloadFailed("\(error)", generation: generation)
            }
        }
    }

    func reloadFailed(_ message: String, generation: Int) {
        logger.error("reload: \(message); keeping the running configuration")
        // As in applyReload: once stopping (STOPPING=1 sent), no READY=1 may follow; and while a
        // later SIGHUP's reload is under way, that one re-indexes and says READY=1.
        guard !shuttingDown, generation == reloadGeneration else { return }
        for name in roomOrder { reindex(name) }
        observer.ready(status: statusLine)
    }

    func applyReload(_ fresh: ServerConfig, tls: Result<TLSContext, TLSError>?, generation: Int) {
        // A later SIGHUP read the files again: its result is the one to apply.
        guard !shuttingDown, generation == reloadGeneration else { return }
        let keptTLS = reloadTLS(fresh.tls, context: tls)
        var (kept, warnings) = RestartOnlySettings.keep(running: config, fresh: fresh, socketActivated: !listenFDs.isEmpty || !tlsSide.listenFDs.isEmpty)
        for warning in warnings { logger.warning("reload: \(warning)") }
        kept.tls = keptTLS
        for roomConfig in fresh.rooms {
            if let runtime = rooms[roomConfig.name] {
                if runtime.config.token != roomConfig.token {
                    for member in runtime.members.values { member.control = roomConfig.token == nil }
                }
                runtime.config = roomConfig
                runtime.room.policy = roomConfig.policy
            } else {
                do {
                    addRoom(roomConfig, document: try Document.open(roomConfig.document, pagination: roomConfig.pagination,
                                                                    notes: roomConfig.notes, guideAddress: guideAddress))
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
        delivery.outputHighWater = kept.outputHighWater
        fitClientLimit()
        trackIdleAfterReload()
        for name in roomOrder { reindex(name) }
        watchDocuments()
        logger.info("reloaded: \(roomOrder.count) room(s)")
        observer.ready(status: statusLine)
    }
}
