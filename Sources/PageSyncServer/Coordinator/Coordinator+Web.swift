import PageSyncCore
import UV

/// The `--web-listen` listener: the follower page, its script and style, and the WebSocket
/// whose members are sessions like any TCP client's (same admission, limits, AUTH and WHO).
extension Coordinator {
    /// Starts the web listener when `web-listen` is set.
    func startWeb() throws(StartError) {
        guard let address = config.webListen else { return }
        do {
            let listener = try TCPListener(loop: loop, host: address.host, port: Int(address.port))
            let server = HTTPServer(loop: loop, listener: listener) { head in self.answerWeb(head) }
            try server.start()
            webServer = server
        } catch {
            throw StartError("cannot listen for the web on \(address): \(error)")
        }
        let bound = Monitoring.address(webServer?.localAddress) ?? "\(address)"
        logger.info("follower page on http://\(bound)/, WebSocket on ws://\(bound)\(WebRoutes.webSocketPath)")
    }

    /// Stops the web listener (shutdown); WebSocket members are closed with the other sessions.
    func stopWeb() {
        webServer?.close()
        webServer = nil
    }

    /// The web listener's answer to one request.
    private func answerWeb(_ head: HTTPRequestHead) -> HTTPReply {
        switch WebRoutes.route(head, roomExists: { rooms[$0] != nil }) {
        case .respond(let response):
            return .respond(response)
        case .webSocket(let room):
            switch WebSocketHandshake.decide(head, allowedOrigins: config.webOrigins) {
            case .refuse(let response):
                return .respond(response)
            case .accept(let response):
                return .upgrade { connection, buffered in
                    connection.write(response.encodedHead(closing: false))
                    let socket = WebSocketConnection(connection, loop: self.loop, maxMessageBytes: self.config.maxLineLength, buffered: buffered)
                    self.accept(socket, room: room)
                }
            }
        }
    }
}
