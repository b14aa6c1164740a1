import PageSyncCore
import PageSyncMarkdown
import UV

/// The `--web-listen` and `--web-tls-listen` listeners: the follower page, its script and
/// style, and the WebSocket whose members are sessions like any TCP client's (same admission,
/// limits, AUTH and WHO), over HTTP and over TLS alike.
extension Coordinator {
    /// Starts the web listeners that are set: `web-listen`, and `web-tls-listen` with the
    /// certificate the line protocol's TLS uses (``TLSSide/context``, made by ``startTLS(socketActivated:)``
    /// before this, and replaced by SIGHUP for both).
    func startWeb() throws(StartError) {
        if !webListenFDs.isEmpty {
            // Socket activation (pagesyncd-web.socket): systemd's sockets, web-listen not bound.
            for fd in webListenFDs {
                let server = try startWebServer(limits: HTTPLimits(), wrap: nil,
                                                failure: "cannot serve the web on the \(ServerConfig.webSocketName) socket systemd passed") {
                    try TCPListener(loop: loop, adopting: fd)
                }
                if webServer == nil { webServer = server } else { webMoreServers.append(server) }
                let bound = Monitoring.address(server.localAddress) ?? ServerConfig.webSocketName
                logger.info("follower page on http://\(bound)/ (socket from systemd), WebSocket on ws://\(bound)\(WebRoutes.webSocketPath)")
            }
        } else if let address = config.webListen {
            webServer = try startWebServer(on: address, limits: HTTPLimits(), wrap: nil)
            let bound = Monitoring.address(webServer?.localAddress) ?? "\(address)"
            logger.info("follower page on http://\(bound)/, WebSocket on ws://\(bound)\(WebRoutes.webSocketPath)")
        }
        if let address = config.webTLSListen {
            guard let tls = config.tls, tlsSide.context != nil else {
                throw StartError("--web-tls-listen needs a TLS certificate: give --tls-cert and --tls-key (or tls: in the config)")
            }
            let limits = HTTPLimits(handshakeTimeoutMilliseconds: UInt64(tls.handshakeTimeoutSeconds) * 1000)
            webTLSServer = try startWebServer(on: address, limits: limits) { tcp in self.wrapWebTLS(tcp) }
            let bound = Monitoring.address(webTLSServer?.localAddress) ?? "\(address)"
            logger.info("follower page on https://\(bound)/, WebSocket on wss://\(bound)\(WebRoutes.webSocketPath)")
        }
    }

    private func startWebServer(on address: ListenAddress, limits: HTTPLimits,
                                wrap: ((TCPConnection) -> (any StreamConnection)?)?) throws(StartError) -> HTTPServer {
        try startWebServer(limits: limits, wrap: wrap, failure: "cannot listen for the web on \(address)") {
            try TCPListener(loop: loop, host: address.host, port: Int(address.port))
        }
    }

    /// A web listener on the socket `listen` opens (bound here, or passed by systemd), answering
    /// with ``answerWeb(_:loopback:)``; `failure` and the error make the start error's line.
    private func startWebServer(limits: HTTPLimits, wrap: ((TCPConnection) -> (any StreamConnection)?)?, failure: String,
                                listen: () throws -> TCPListener) throws(StartError) -> HTTPServer {
        do {
            let listener = try listen()
            let loopback = listener.localAddress.map { WebHostCheck.isLoopback($0.host) } ?? false
            let server = HTTPServer(loop: loop, listener: listener, limits: limits, wrap: wrap) { head in self.answerWeb(head, loopback: loopback) }
            try server.start()
            return server
        } catch {
            throw StartError("\(failure): \(error)")
        }
    }

    /// A TLS web connection: the server side of a session with the certificate in force now.
    private func wrapWebTLS(_ tcp: TCPConnection) -> (any StreamConnection)? {
        guard let context = tlsSide.context, !shuttingDown else {
            tcp.close()
            return nil
        }
        do throws(TLSError) {
            return try TLSConnection(tcp, loop: loop, context: context)
        } catch {
            logger.error("TLS web connection from \(tcp.peerDescription): \(error)")
            return nil
        }
    }

    /// Stops the web listeners (shutdown); WebSocket members are closed with the other sessions.
    func stopWeb() {
        webServer?.close()
        webServer = nil
        for server in webMoreServers { server.close() }
        webMoreServers = []
        webTLSServer?.close()
        webTLSServer = nil
    }

    /// The web listener's answer to one request.
    private func answerWeb(_ head: HTTPRequestHead, loopback: Bool) -> HTTPReply {
        if let refusal = WebHostCheck.refusal(head, loopback: loopback, allowedOrigins: config.webOrigins) { return .respond(refusal) }
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
