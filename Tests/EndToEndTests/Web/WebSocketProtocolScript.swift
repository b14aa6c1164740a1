/// An independent WebSocket client for the web listener's protocol test: Python's websocket-client
/// (Debian's python3-websocket) for well-formed traffic, and frames built byte by byte on a raw
/// socket for what a library would refuse to send (unmasked, invalid UTF-8). It prints one
/// `key: value` line per check; the test asserts on them. Arguments: web port, TCP port.
enum WebSocketProtocolScript {
    static let source = #"""
        import os, socket, struct, subprocess, sys, urllib.error, urllib.request
        import websocket
        from websocket import ABNF

        host, web, tcp = "127.0.0.1", int(sys.argv[1]), int(sys.argv[2])
        url = f"ws://{host}:{web}/ws?room=deck"

        def report(key, value):
            print(f"{key}: {value}", flush=True)

        def raw_open(path="/ws?room=deck", extra="", rcvbuf=None):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.settimeout(5)
            s.connect((host, web))
            key = "dGhlIHNhbXBsZSBub25jZQ=="
            s.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{web}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n").encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(1)
                if not chunk: break
                head += chunk
            return s, head.decode("latin-1")

        def frame(opcode, payload, fin=True, mask=True):
            first = (0x80 if fin else 0) | opcode
            n = len(payload)
            length = bytes([(0x80 if mask else 0) | n]) if n < 126 else bytes([(0x80 if mask else 0) | 126]) + struct.pack("!H", n)
            if not mask: return bytes([first]) + length + payload
            key = os.urandom(4)
            return bytes([first]) + length + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))

        def parse_frames(data):
            """The whole frames in `data` (unmasked, as the server sends them): (opcode, payload)."""
            frames = []
            while len(data) >= 2:
                opcode, n = data[0] & 0x0F, data[1] & 0x7F
                at = 2
                if n == 126: n, at = struct.unpack("!H", data[2:4])[0], 4
                if len(data) < at + n: break
                frames.append((opcode, data[at:at + n])); data = data[at + n:]
            return frames

        def read_frames(s):
            """Frames the server sends until it closes: (opcode, payload)."""
            data = b""
            while True:
                try: chunk = s.recv(65536)
                except OSError: break
                if not chunk: break
                data += chunk
            return parse_frames(data)

        def close_code(frames):
            closes = [p for op, p in frames if op == 8]
            return struct.unpack("!H", closes[0][:2])[0] if closes and len(closes[0]) >= 2 else None

        # Greeting, fragmented command with a ping between its fragments, WHO.
        ws = websocket.create_connection(url, timeout=5)
        report("hello", ws.recv())
        ws.send_frame(ABNF.create_frame("TEX", ABNF.OPCODE_TEXT, fin=0))
        ws.send_frame(ABNF.create_frame("pong?", ABNF.OPCODE_PING))
        ws.send_frame(ABNF.create_frame("T 2", ABNF.OPCODE_CONT, fin=1))
        opcode, pong = ws.recv_data_frame(True)
        report("pong", f"{opcode} {pong.data.decode()}")
        report("text", " | ".join(ws.recv() for _ in range(3)))
        ws.send("NAME webby"); report("name", ws.recv())
        ws.send("WHO")
        who = [ws.recv()]
        while who[-1] != ".": who.append(ws.recv())
        report("who", " | ".join(who))
        # A page turned by nc reaches the socket.
        subprocess.run(["nc", "-q1", host, str(tcp)], input=b"next\n", capture_output=True, timeout=10)
        report("page", ws.recv())
        # The close handshake: the server answers with the same code.
        ws.send_close(1000, b"done")
        answer = ws.recv_frame()
        report("close", f"{answer.opcode} {struct.unpack('!H', answer.data[:2])[0]}")
        ws.shutdown()

        # QUIT: its reply, then the server's close frame.
        ws = websocket.create_connection(url, timeout=5)
        ws.recv()
        ws.send("QUIT")
        bye = ws.recv()
        answer = ws.recv_frame()
        report("quit", f"{bye} -> {answer.opcode} {struct.unpack('!H', answer.data[:2])[0]}")

        # What each bad frame gets: a close frame with its code, then the end of the connection.
        cases = {
            "unmasked": frame(1, b"WHO", mask=False),
            "oversized": frame(1, b"N" * 200),
            "invalid_utf8": frame(1, b"NAME \xff\xfe"),
            "binary": frame(2, b"\x00\x01"),
            "line_break": frame(1, b"NEXT\nNEXT"),
        }
        for name, bad in cases.items():
            s, head = raw_open()
            s.sendall(bad)
            frames = read_frames(s)
            report(name, f"{head.split(chr(13))[0]} -> close {close_code(frames)}")
            s.close()

        # An unknown room: ERR 404 over the socket, then a close.
        s, head = raw_open("/ws?room=nope")
        frames = read_frames(s)
        report("unknown_room", " | ".join(p.decode() for op, p in frames if op == 1) + f" -> close {close_code(frames)}")
        # Handshakes refused over HTTP.
        for name, extra in {"foreign_origin": "Origin: http://evil.example\r\n", "same_origin": f"Origin: http://{host}:{web}\r\n",
                            "listed_origin": "Origin: http://app.example:8000\r\n"}.items():
            s, head = raw_open(extra=extra)
            report(name, head.split("\r\n")[0]); s.close()
        s = socket.create_connection((host, web), timeout=5)
        s.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{web}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode())
        report("old_version", s.recv(4096).decode().split("\r\n")[0]); s.close()
        s = socket.create_connection((host, web), timeout=5)
        s.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{web}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        report("no_key", s.recv(4096).decode().split("\r\n")[0]); s.close()
        # DNS rebinding: another site's name for this loopback listener, as Host and as Origin.
        s = socket.create_connection((host, web), timeout=5)
        s.sendall(f"GET /ws HTTP/1.1\r\nHost: evil.example:{web}\r\nOrigin: http://evil.example:{web}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode())
        report("rebound", s.recv(4096).decode().split("\r\n")[0]); s.close()

        # Pages rendered for the follower page: text escaped in a <pre>, unknown pages and rooms 404.
        def get(path):
            try:
                with urllib.request.urlopen(f"http://{host}:{web}{path}", timeout=5) as response:
                    return f"{response.status} {response.headers['X-Pagesync-Page']} {response.read().decode().strip()!r}"
            except urllib.error.HTTPError as error:
                return f"{error.code} {error.read().decode().strip()}"
        report("render", get("/render/deck/3"))
        report("render_past_end", get("/render/deck/9"))
        report("render_unknown_room", get("/render/nope/1"))

        # A WebSocket member that reads nothing while the room turns 5,000 times is conflated like a
        # slow TCP follower: once it reads, it has far fewer PAGE lines than turns, the last one
        # the room's latest state (not a backlog, and the daemon held no more for it).
        s, head = raw_open(rcvbuf=4096)
        turns = 5000
        lines = "".join("next\n" if i % 2 == 0 else "prev\n" for i in range(turns)) + "status\n"
        out = subprocess.run(["nc", "-q1", host, str(tcp)], input=lines.encode(), capture_output=True, timeout=60).stdout.decode()
        final = [w for w in out.strip().split("\n")[-1].split() if w.startswith("version=")][0]
        data, end = b"", __import__("time").time() + 15
        while f" {final} ".encode() not in data and __import__("time").time() < end:
            try: chunk = s.recv(65536)
            except OSError: break
            if not chunk: break
            data += chunk
        pages = [p.decode() for op, p in parse_frames(data) if op == 1 and p.startswith(b"PAGE ")]
        report("stalled", f"{head.split(chr(13))[0]} {0 < len(pages) < turns // 5} {bool(pages) and f' {final} ' in pages[-1] + ' '}")
        s.close()

        # A flood of 1,500 PING messages sent at once over one WebSocket: the web's rate (1,000 a
        # second, 256 at once) answers every one, in order, none dropped; a TCP member's PING sent
        # after the whole flood is answered while the flood still waits for its rate.
        import select, time
        flood = 1500
        s, head = raw_open()
        s.sendall(b"".join(frame(1, b"PING") for _ in range(flood)))
        t = socket.create_connection((host, tcp), timeout=5)
        tf = t.makefile("rb")
        tf.readline()
        t.sendall(b"ping\n")
        tcp_pong = tf.readline().decode().strip()
        data = b""
        while select.select([s], [], [], 0)[0]:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        before = sum(1 for op, p in parse_frames(data) if p == b"OK PONG")
        end = time.time() + 20
        while sum(1 for op, p in parse_frames(data) if op == 1 and p.startswith(b"OK ")) < flood and time.time() < end:
            try: chunk = s.recv(65536)
            except OSError: break
            if not chunk: break
            data += chunk
        replies = [p for op, p in parse_frames(data) if op == 1 and not p.startswith(b"HELLO ") and not p.startswith(b"PAGE ") and not p.startswith(b"AUDIENCE ")]
        report("flood", f"{head.split(chr(13))[0]} {tcp_pong} {before < flood} {len(replies)} {all(p == b'OK PONG' for p in replies)}")
        t.sendall(b"info stats\n")
        waits = "-"
        while True:
            line = tf.readline().decode().strip()
            if line.startswith("web_rate_waits:"): waits = line.split(":", 1)[1]
            if line == "." or not line and tf.closed: break
        report("web_rate_waits", waits)
        s.close(); t.close()
        """#
}
