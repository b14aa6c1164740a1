/// The client side of a WebSocket's opening handshake (RFC 6455 §4.1), for a client on the
/// loop (the benchmark's followers): connects, sends the upgrade request, reads the answer's
/// head, checks `101` and `Sec-WebSocket-Accept`, and hands over a ``WebSocketConnection`` in
/// the client role (its frames masked) with the bytes that came after the head. Loop thread only.
public enum WebSocketClient {
    /// The longest answer head read before giving up.
    public static let maxHeadBytes = 8192

    /// Why a handshake failed.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The connection failed or closed before the head was whole.
        case connection(UVError?)
        /// The answer was not `101` with the right `Sec-WebSocket-Accept`: its first line.
        case refused(String)

        public var description: String {
            switch self {
            case .connection(let error): "WebSocket: connection failed" + (error.map { ": \($0)" } ?? " before the answer")
            case .refused(let status): "WebSocket: refused: \(status)"
            }
        }
    }

    /// The request for `path` (with its query) on `host`, with a fresh key; and the key.
    public static func request(host: String, path: String, origin: String? = nil) -> (bytes: [UInt8], key: String) {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = WebSocketHandshake.base64(nonce)
        var head = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { head += "Origin: \(origin)\r\n" }
        return (Array((head + "\r\n").utf8), key)
    }

    /// Whether `head` (the answer's head, without its blank line) accepts a handshake sent
    /// with `key`: nil if so, else its first line.
    public static func refusal(of head: String, key: String) -> String? {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let status = lines.first.map(String.init) ?? ""
        guard status.hasPrefix("HTTP/1.1 101") else { return status }
        let expected = WebSocketHandshake.acceptValue(forKey: key)
        let accepted = lines.dropFirst().contains { line in
            guard let colon = line.firstIndex(of: ":") else { return false }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            return line[..<colon].lowercased() == "sec-websocket-accept" && String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) == expected
        }
        return accepted ? nil : status + " (no matching Sec-WebSocket-Accept)"
    }

    /// Connects to `host`:`port`, upgrades `path`, and calls `done` with the WebSocket.
    public static func connect(loop: EventLoop, host: String, port: Int, path: String, maxMessageBytes: Int = 65536,
                               _ done: @escaping (Result<WebSocketConnection, Failure>) -> Void) {
        TCPConnection.connect(loop: loop, host: host, port: port) { result in
            switch result {
            case .failure(let error):
                done(.failure(.connection(error)))
            case .success(let tcp):
                let (bytes, key) = request(host: "\(host):\(port)", path: path)
                var head: [UInt8] = []
                var finished = false
                tcp.startReading { event in
                    guard !finished else { return }
                    switch event {
                    case .data(let chunk):
                        head.append(contentsOf: chunk)
                        guard let end = head.firstRange(of: [13, 10, 13, 10]) else {
                            if head.count > maxHeadBytes {
                                finished = true
                                tcp.close()
                                done(.failure(.refused("answer head over \(maxHeadBytes) bytes")))
                            }
                            return
                        }
                        finished = true
                        tcp.stopReading()
                        if let refused = refusal(of: String(decoding: head[..<end.lowerBound], as: UTF8.self), key: key) {
                            tcp.close()
                            return done(.failure(.refused(refused)))
                        }
                        let rest = Array(head[end.upperBound...])
                        done(.success(WebSocketConnection(tcp, loop: loop, maxMessageBytes: maxMessageBytes, buffered: rest, role: .client)))
                    case .eof:
                        finished = true
                        tcp.close()
                        done(.failure(.connection(nil)))
                    case .error(let error):
                        finished = true
                        tcp.close()
                        done(.failure(.connection(error)))
                    }
                }
                tcp.write(bytes)
            }
        }
    }
}
