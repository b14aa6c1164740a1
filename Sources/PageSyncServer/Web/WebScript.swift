/// The follower page's script, served as `/app.js`: it speaks the protocol over the WebSocket
/// (`/ws?room=<room>`, one line per text message), shows the room's page as the server renders
/// it (`/render/<room>/<n>`: markdown with raw HTML as text, other documents escaped), parsed
/// with `DOMParser` so nothing in it runs, follows every `PAGE`,
/// reconnects with backoff and resyncs from the new `HELLO`, lets the reader browse and come
/// back (telling the room with `VIEW`, so a presenter's counts include browser readers), raises
/// and lowers the reader's hand (`HAND`), sends `PING` after half the daemon's idle timeout
/// (the greeting's `idle=`) in silence, and turns the room's page when the room allows it
/// (after `AUTH` with a token typed into the page, sent over the socket only). A page that could
/// not be loaded (a listener at its connection limit answers `503`) is asked again after a while.
package enum WebScript {
    /// The script (plain ES2017, no framework).
    package static let source = #"""
        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const room = decodeURIComponent(location.pathname.slice(1));
          let socket = null, attempt = 0, state = null, browsing = null, control = false, token = null;
          let replies = [], body = null, bodyHeader = null;
          const rendered = new Map();
          let loading = null, retry = 0, reported = "follow", handUp = false;
          // The daemon's idle timeout (the greeting's idle=), and when the page last sent a line.
          let idleMs = 0, lastSent = 0;

          function fields(line) {
            const out = {};
            for (const word of line.split(" ")) {
              const at = word.indexOf("=");
              if (at > 0) { try { out[word.slice(0, at)] = decodeURIComponent(word.slice(at + 1)); } catch { out[word.slice(0, at)] = word.slice(at + 1); } }
            }
            return out;
          }
          function send(line, onReply) {
            if (!socket || socket.readyState !== WebSocket.OPEN) return false;
            replies.push(onReply || (() => {}));
            socket.send(line);
            lastSent = Date.now();
            return true;
          }
          function status(text) { $("status").textContent = text; }

          function shownPage() { return browsing === null ? (state ? state.page : 1) : browsing; }
          function render() {
            if (!state) return;
            const page = shownPage();
            const by = state.by && state.by !== "-" ? `, turned by ${state.by}` : "";
            const focus = (state.line > 1 ? ` · line ${state.line}` : "") + (state.mark && state.mark !== "-" ? ` · lines ${state.mark} marked` : "");
            $("position").textContent = browsing === null
              ? `Page ${state.page} of ${state.pages}${by}${focus}`
              : `Browsing page ${page} of ${state.pages} (the room is on page ${state.page})`;
            $("follow").hidden = browsing === null;
            $("back").disabled = page <= 1;
            $("forward").disabled = page >= state.pages;
            $("turning").hidden = !control;
            $("auth").hidden = control || !needsToken;
            const key = `${state.doc}:${page}`;
            if (rendered.has(key)) {
              show(rendered.get(key));
              document.body.dataset.page = String(page);
              return;
            }
            if (loading === key) return;
            loading = key;
            fetch(`/render/${encodeURIComponent(state.room)}/${page}`, { cache: "no-store", credentials: "omit" })
              .then((response) => response.ok
                ? response.text().then((html) => ({ html, doc: response.headers.get("X-Pagesync-Doc"), page: response.headers.get("X-Pagesync-Page") }))
                : Promise.reject(new Error(`HTTP ${response.status}`)))
              .then((got) => {
                loading = null;
                rendered.set(`${got.doc}:${got.page}`, got.html);
                if (rendered.size > 64) rendered.delete(rendered.keys().next().value);
                if (state.doc === got.doc) { if (String(shownPage()) === got.page) render(); }
                else setTimeout(render, 500);  // the document changed meanwhile: its PAGE is on its way
              })
              .then(() => { retry = 0; })
              .catch((error) => {
                loading = null;
                retry = Math.min(retry + 1, 5);
                const wait = Math.min(4000, 250 * 2 ** retry) * (0.5 + Math.random());
                status(`Could not load page ${page}: ${error.message}; trying again in ${(wait / 1000).toFixed(1)} s`);
                setTimeout(render, wait);
              });
          }
          // The server's HTML (markdown rendered with raw HTML as text, or text in a <pre>),
          // parsed in an inert document: nothing in it loads or runs while it is parsed, and the
          // page's Content-Security-Policy allows no inline script after.
          function show(html) {
            const parsed = new DOMParser().parseFromString(html, "text/html");
            $("text").replaceChildren(...parsed.body.childNodes);
            showFocus();
          }
          // The room's line and mark on a text page (a <pre>): its lines become spans (text only),
          // the marked ones highlighted, the room's line scrolled to the top. Not while browsing.
          function showFocus() {
            const pre = $("text").querySelector("pre");
            if (!pre || !state || browsing !== null) return;
            if (!pre.dataset.split) {
              const parts = pre.textContent.split("\n");
              if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
              pre.replaceChildren(...parts.map((text, i) => {
                const span = document.createElement("span");
                span.className = "line";
                span.dataset.line = String(i + 1);
                span.textContent = text + "\n";
                return span;
              }));
              pre.dataset.split = "yes";
            }
            const ends = state.mark && state.mark !== "-" ? state.mark.split("-").map(Number) : [0, -1];
            const first = ends[0], last = ends.length > 1 ? ends[1] : ends[0];
            for (const span of pre.children) {
              const n = Number(span.dataset.line);
              span.classList.toggle("marked", n >= first && n <= last);
            }
            const top = pre.children[state.line - 1];
            if (state.line > 1 && top) top.scrollIntoView({ block: "start" });
          }
          let needsToken = false;
          function adopt(line) {
            const got = fields(line);
            state = { page: Number(got.page), pages: Number(got.pages), version: got.version, by: got.by, doc: got.doc, room: got.room,
                      line: Number(got.line || 1), mark: got.mark || "-" };
            if (browsing !== null && browsing > state.pages) browsing = null;
            reportView();
            $("room").textContent = got.title || got.room;
            document.title = `${got.title || got.room}: page ${state.page} of ${state.pages}`;
            render();
          }
          function onLine(line) {
            if (body !== null) {
              if (line === ".") { const done = body.join("\n"); body = null; (replies.shift() || (() => {}))(true, bodyHeader, done); }
              else body.push(line.startsWith("..") ? line.slice(1) : line);
              return;
            }
            if (line.startsWith("PAGE ")) return adopt(line);
            if (line.startsWith("HELLO ")) {
              attempt = 0;
              reported = "follow";  // a new session: the server counts it following, hand down
              handUp = false;
              showHand();
              control = fields(line).control === "yes";
              idleMs = Number(fields(line).idle || 0) * 1000;
              lastSent = Date.now();
              needsToken = !control;
              status(control ? "Connected: you may turn pages" : "Connected: following");
              adopt(line);
              if (token && !control) send(`AUTH ${token}`, authReply);
              return;
            }
            if (line.startsWith("BYE")) return status(line);
            // Events that are no replies: a presenter's counts, a hand lowered by someone.
            if (line.startsWith("AUDIENCE ")) return;
            if (line.startsWith("HAND ")) {
              handUp = false;
              showHand();
              return status(`Your hand was lowered by ${fields(line).by || "someone"}`);
            }
            if (line.startsWith("OK TEXT ")) { body = []; bodyHeader = line; return; }
            const ok = line.startsWith("OK");
            if (!ok && replies.length === 0) return status(line);
            (replies.shift() || (() => {}))(ok, line, null);
          }
          function authReply(ok, line) {
            control = ok && fields(line).control === "yes";
            if (!ok) token = null;
            status(control ? "You may turn pages" : line);
            render();
          }

          function connect() {
            const scheme = location.protocol === "https:" ? "wss://" : "ws://";
            const query = room ? `?room=${encodeURIComponent(room)}` : "";
            socket = new WebSocket(`${scheme}${location.host}/ws${query}`);
            replies = []; body = null;
            socket.onmessage = (event) => { if (typeof event.data === "string") onLine(event.data); };
            socket.onclose = () => {
              socket = null;
              const wait = Math.min(2000, 250 * 2 ** attempt) * (0.75 + Math.random() / 2);
              attempt = Math.min(attempt + 1, 6);
              status(`Disconnected; reconnecting in ${(wait / 1000).toFixed(1)} s`);
              document.body.dataset.connected = "no";
              setTimeout(connect, wait);
            };
            socket.onopen = () => { document.body.dataset.connected = "yes"; };
          }

          // What the screen shows, told to the room when it changes (VIEW FOLLOW, VIEW BROWSE n).
          function reportView() {
            const want = browsing === null ? "follow" : `browse ${browsing}`;
            if (want === reported) return;
            if (send(browsing === null ? "VIEW FOLLOW" : `VIEW BROWSE ${browsing}`)) reported = want;
          }
          function showHand() {
            $("hand").textContent = handUp ? "Lower hand" : "Raise hand";
            $("hand").setAttribute("aria-pressed", handUp ? "true" : "false");
            document.body.dataset.hand = handUp ? "up" : "down";
          }
          function toggleHand() {
            if (!send(handUp ? "HAND DOWN" : "HAND UP", (ok, line) => { if (!ok) status(line); })) return;
            handUp = !handUp;
            showHand();
            status(handUp ? "Your hand is up" : "Your hand is down");
          }
          function browse(step) {
            if (!state) return;
            const page = Math.min(state.pages, Math.max(1, shownPage() + step));
            browsing = page === state.page ? null : page;
            reportView();
            render();
          }
          function follow() { browsing = null; reportView(); render(); }
          function turn(verb) { if (control && state) send(`${verb} IF ${state.version}`, (ok, line) => { if (!ok) status(line); }); }

          $("back").onclick = () => browse(-1);
          $("forward").onclick = () => browse(1);
          $("follow").onclick = follow;
          $("hand").onclick = toggleHand;
          $("prev").onclick = () => turn("PREV");
          $("next").onclick = () => turn("NEXT");
          $("auth").onsubmit = (event) => {
            event.preventDefault();
            token = $("token").value;
            $("token").value = "";
            if (token) send(`AUTH ${token}`, authReply);
          };
          document.addEventListener("keydown", (event) => {
            if (event.target instanceof HTMLInputElement || event.altKey || event.ctrlKey || event.metaKey) return;
            if (event.key === "ArrowLeft") browse(-1);
            else if (event.key === "ArrowRight") browse(1);
            else if (event.key === "f" || event.key === "Escape") follow();
            else if (event.key === "h") toggleHand();
            else if (event.key === "n" && control) turn("NEXT");
            else if (event.key === "p" && control) turn("PREV");
            else return;
            event.preventDefault();
          });
          // A reader who only follows sends nothing: with an idle timeout, a PING after half of it.
          setInterval(() => { if (idleMs > 0 && Date.now() - lastSent >= Math.max(250, idleMs / 2 - 500)) send("PING"); }, 500);
          connect();
        })();

        """#
}
