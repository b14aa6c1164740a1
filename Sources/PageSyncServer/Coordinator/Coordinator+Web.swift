import PageSyncCore
import PageSyncMarkdown
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
        case .render(let room, let page):
            return .respond(rendered(room: room, page: page))
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

    /// Page `page` of `room` as an HTML fragment: a markdown document's page rendered by
    /// cmark-gfm (raw HTML shown as text, dangerous URLs emptied: ``CmarkParser/safeHTML(_:)``),
    /// any other escaped in a `<pre>`. `X-Pagesync-Doc` and `X-Pagesync-Page` say which page of
    /// which content it is. Read and rendered on the loop, at most `max-text` bytes of it.
    private func rendered(room: String, page: Int) -> HTTPResponse {
        guard let runtime = rooms[room] else {
            return .text(404, "no room named \(room)", headers: WebRoutes.securityHeaders)
        }
        let document = runtime.document
        guard let number = PageNumber(page), page <= document.pageCount else {
            return .text(404, "no page \(page): this document has \(document.pageCount) pages", headers: WebRoutes.securityHeaders)
        }
        let text: String
        do {
            text = String(decoding: try document.text(of: number, limit: config.maxTextBytes).bytes, as: UTF8.self)
        } catch {
            logger.error("rendering page \(page) of room \(room): \(error)")
            return .text(500, "could not read the document", headers: WebRoutes.securityHeaders)
        }
        let html = DocumentSource.isMarkdownName(runtime.fileName)
            ? CmarkParser.safeHTML(text) : "<pre>\(CmarkParser.escapedHTML(text))</pre>\n"
        return HTTPResponse(status: 200, headers: [
            HTTPHeader("Content-Type", "text/html; charset=utf-8"),
            HTTPHeader("X-Pagesync-Doc", document.id), HTTPHeader("X-Pagesync-Page", String(page)),
        ] + WebRoutes.securityHeaders, body: Array(html.utf8))
    }
}
